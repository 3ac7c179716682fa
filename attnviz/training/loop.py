"""The training loop: a Qt-free generator of :class:`Progress` events (one per step, then a final one).

The CLI prints the events as a progress bar; the GUI runs the same generator in a worker thread,
plots them live and cancels between steps through ``cancel``.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import torch

from attnviz.errors import AttnvizError
from attnviz.models.checkpoint import LoadedModel, save_checkpoint
from attnviz.training.schedule import lr_at, make_optimizer
from attnviz.training.snapshots import SNAPSHOT_FILE, SnapshotRecorder, snapshot_steps

__all__ = ["Progress", "train", "subsample_history", "cpu_threads", "prepare_out_dir", "HISTORY_POINTS", "GRAD_CLIP"]

GRAD_CLIP = 1.0
HISTORY_POINTS = 400  # training curves stored in config.json are averaged down to at most this many points


@dataclass
class Progress:
    """One training event. ``done`` marks the last event; ``result`` is set on it when training finished
    or was cancelled (None when it stopped on an error)."""

    step: int
    total: int
    epoch: float  # examples seen / distinct training examples (task.n_train), or the fraction of steps run
    loss: float
    accuracy: float  # of this step's batch
    lr: float
    elapsed: float  # seconds since the first step started
    items_per_s: float
    message: str = ""
    snapshot: bool = False  # attention of the probe inputs was captured at this step
    done: bool = False
    result: "LoadedModel | None" = None
    snapshots: object = None  # on snapshot events: the Snapshots taken so far (a copy), for a live replay


def subsample_history(history: dict[str, list], max_points: int = HISTORY_POINTS) -> dict[str, list]:
    """Average consecutive steps into at most ``max_points`` buckets (the step is the bucket's last)."""
    n = len(history["step"])
    if n <= max_points:
        return {k: list(v) for k, v in history.items()}
    edges = np.linspace(0, n, max_points + 1).astype(int)
    out: dict[str, list] = {k: [] for k in history}
    for a, b in zip(edges[:-1], edges[1:]):
        out["step"].append(int(history["step"][b - 1]))
        for key in ("loss", "accuracy", "lr"):
            out[key].append(float(np.mean(history[key][a:b])))
    return out


def _write_snapshots(recorder, path: str) -> None:
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **recorder.snapshots.to_payload())


def _resolve_task(task):
    if isinstance(task, str):
        from attnviz.tasks import get_task

        return get_task(task)
    return task


def prepare_out_dir(out_dir) -> Path | None:
    """Create the model directory if needed and check it is writable (AttnvizError otherwise)."""
    if out_dir is None:
        return None
    out = Path(out_dir).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AttnvizError(f"cannot create output directory {out}: {exc.strerror or exc}") from None
    probe = out / ".attnviz-write-test"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise AttnvizError(f"output directory {out} is not writable: {exc.strerror or exc}") from None
    return out


def _drop_if_empty(out: Path | None, created: bool) -> None:
    """Remove the model directory this run created when nothing was written into it."""
    if out is None or not created:
        return
    try:
        out.rmdir()  # only succeeds when empty: never deletes a file
    except OSError:
        pass


def cpu_threads() -> int:
    """Intra-op threads used while training on the CPU: 1 unless ``ATTNVIZ_TRAIN_THREADS`` says otherwise.

    The bundled models are tiny; on a machine whose cores are busy, two OpenMP threads spin-waiting
    for each other made a step 4-7x slower than one thread (measured: 52 ms vs 7.5 ms per step).
    """
    try:
        return max(1, int(os.environ.get("ATTNVIZ_TRAIN_THREADS", "1")))
    except ValueError:
        return 1


def _epoch(task, items: int, step: int, total: int) -> float:
    n_train = getattr(task, "n_train", None)
    return items / n_train if n_train else step / total


def train(task, *, steps=None, device="auto", seed=0, out_dir=None, checkpoint_every=0, n_snapshots=20,
          batch_size=None, lr=None, cancel: Callable[[], bool] | None = None,
          config_overrides=None) -> Iterator[Progress]:
    """Train a fresh model on ``task``, yielding a :class:`Progress` event per step and a final one.

    Parameters
    ----------
    task : Task or str
        A task instance or a built-in task name.
    steps, batch_size, lr : optional
        Override the task's defaults.
    device : str
        "auto", "cpu", "cuda" or "mps" (see :func:`attnviz.device.pick_device`).
    seed : int
        Seeds the weight initialisation (torch) and the batch sampling (numpy Generator).
    out_dir : path, optional
        Model directory: periodic and final checkpoints plus ``snapshots.npz``. None keeps
        everything in memory (the final event's ``result``).
    checkpoint_every : int
        Write a checkpoint every this many steps (0: only the final one).
    n_snapshots : int
        About this many evenly spaced steps (including step 0 and the last) at which the attention
        of ``task.probe_inputs()`` is captured.
    cancel : callable, optional
        Checked between steps; when it returns True the loop stops, the last checkpoint is left as
        it was, and the final event carries the partly trained model.
    config_overrides : dict, optional
        Keyword arguments for ``task.model_config`` (e.g. ``{"pos": "none"}``).

    Raises
    ------
    AttnvizError
        Bad arguments or output directory, or a non-finite loss/gradient (after an event that says so).

    Notes
    -----
    On the CPU the process's intra-op thread count is set to :func:`cpu_threads` while the generator
    runs and restored when it finishes or is closed.
    """
    from attnviz.device import pick_device

    task = _resolve_task(task)
    dev = pick_device(device) if not isinstance(device, torch.device) else device
    previous = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(cpu_threads())
    try:
        yield from _run(task, dev, steps, seed, out_dir, checkpoint_every, n_snapshots, batch_size, lr, cancel,
                        config_overrides)
    finally:
        torch.set_num_threads(previous)


def _run(task, dev, steps, seed, out_dir, checkpoint_every, n_snapshots, batch_size, lr, cancel,
         config_overrides) -> Iterator[Progress]:
    from attnviz.models.registry import build_model

    total = int(task.steps if steps is None else steps)
    bs = int(task.batch_size if batch_size is None else batch_size)
    peak = float(task.lr if lr is None else lr)
    if total < 1 or bs < 1 or not (peak > 0 and math.isfinite(peak)):
        raise AttnvizError(f"steps ({total}), batch size ({bs}) and learning rate ({peak}) must be positive "
                           "and finite")
    cfg = task.model_config(**(config_overrides or {}))
    from attnviz.models.validate import check_memory, estimate_training_bytes

    # before anything is allocated: a batch size of 10^9 is one line, not a machine swapping to death
    check_memory(estimate_training_bytes(cfg, bs), f"training with batch size {bs:,}")
    created = out_dir is not None and not Path(out_dir).expanduser().exists()
    out = prepare_out_dir(out_dir)
    warmup = min(task.warmup, total // 5)  # a short run (a quick test, a demo) still gets its cosine decay

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model(cfg).to(dev)
    task.prepare_model(model)  # the task's own initialisation, if any (after the seed: reproducible)
    model.train()
    opt = make_optimizer(model, peak, task.weight_decay, task.decay_by_name)
    # no "name" on disk: a model directory is named by its folder (which make_assets renames into place)
    base_info = {"task": task.name, **task.info()}
    loaded = LoadedModel(model=model, config=cfg, info={"name": task.name, **base_info}, tokenizer=task.tokenizer,
                         tgt_tokenizer=task.tgt_tokenizer, path=None, device=dev, extra={"task_obj": task})
    record_at = set(snapshot_steps(total, n_snapshots))
    recorder = SnapshotRecorder(loaded, task.probe_inputs()) if record_at else None
    if recorder is not None and 0 in record_at:
        recorder.take(0)

    history: dict[str, list] = {"step": [], "loss": [], "accuracy": [], "lr": []}
    run_info = {"seed": seed, "steps": total, "batch_size": bs, "lr": peak, "warmup": warmup, "device": str(dev),
                "threads": torch.get_num_threads(), "config_overrides": dict(config_overrides or {})}
    last_ckpt: int | None = None

    def save(step: int, extra: dict) -> None:
        # weights, config and the snapshots so far are one unit: a kill mid-save keeps the previous checkpoint
        info = {**base_info, **run_info, "history": subsample_history(history), "trained_steps": step, **extra}
        files = {}
        if recorder is not None and recorder.snapshots.steps:
            files[SNAPSHOT_FILE] = lambda path: _write_snapshots(recorder, path)
        save_checkpoint(out, model, cfg, info, tokenizer=task.tokenizer, tgt_tokenizer=task.tgt_tokenizer,
                        extra_files=files)

    t0, cpu0 = time.perf_counter(), time.process_time()
    items = 0
    step = 0
    ev = None
    while step < total:
        if cancel is not None and cancel():
            kept = f"; checkpoint of step {last_ckpt} kept in {out}" if last_ckpt else ""
            if not last_ckpt:
                _drop_if_empty(out, created)  # a run cancelled before any checkpoint leaves no folder behind
            model.eval()
            loaded.info = {"name": task.name, **base_info, **run_info, "history": subsample_history(history),
                           "trained_steps": step, "cancelled": True}
            yield Progress(step, total, _epoch(task, items, step, total), ev.loss if ev else math.nan,
                           ev.accuracy if ev else math.nan, ev.lr if ev else 0.0, time.perf_counter() - t0,
                           ev.items_per_s if ev else 0.0, f"cancelled at step {step} of {total}{kept}",
                           done=True, result=loaded)
            return
        lr_now = lr_at(step, total, peak, warmup)
        for group in opt.param_groups:
            group["lr"] = lr_now
        batch = task.sample_batch("train", bs, rng).to(dev)
        logits = model(**batch.inputs)
        loss, correct, counted = task.loss(logits, batch)
        loss_val = float(loss.detach())
        problem = None if math.isfinite(loss_val) else f"loss became {loss_val} at step {step + 1}"
        if problem is None:
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP))
            if not math.isfinite(norm):
                problem = f"gradient norm became {norm} at step {step + 1}"
        if problem is not None:
            kept = (f"the checkpoint of step {last_ckpt} in {out} is kept" if last_ckpt
                    else "no checkpoint was written")
            if not last_ckpt:
                _drop_if_empty(out, created)
            msg = f"training stopped: {problem} (try a lower learning rate); {kept}"
            yield Progress(step, total, _epoch(task, items, step, total), loss_val, math.nan, lr_now,
                           time.perf_counter() - t0, 0.0, msg, done=True)
            raise AttnvizError(msg)
        opt.step()
        step += 1
        items += batch.n_items
        acc = correct / counted if counted else math.nan
        history["step"].append(step)
        history["loss"].append(loss_val)
        history["accuracy"].append(acc)
        history["lr"].append(lr_now)
        snap = recorder is not None and step in record_at
        shared = None
        if snap:
            recorder.take(step)
            taken = recorder.snapshots
            # new lists and dict: the recorder goes on appending while a GUI thread replays this copy
            shared = replace(taken, steps=list(taken.steps), probes=list(taken.probes), parts=list(taken.parts),
                             arrays=dict(taken.arrays), step_tokens=list(taken.step_tokens))
        msg = ""
        if out is not None and checkpoint_every and step % checkpoint_every == 0 and step < total:
            save(step, {"complete": False})
            last_ckpt = step
            msg = f"checkpoint at step {step}"
        elapsed = time.perf_counter() - t0
        ev = Progress(step, total, _epoch(task, items, step, total), loss_val, acc, lr_now, elapsed,
                      items / elapsed if elapsed > 0 else 0.0, msg, snapshot=snap, snapshots=shared)
        yield ev

    train_seconds = time.perf_counter() - t0
    # CPU seconds of this process: on a shared machine this, not the wall time, says what the run costs
    train_cpu = time.process_time() - cpu0
    model.eval()
    with torch.no_grad():
        metrics = task.evaluate(loaded)
    wall = time.perf_counter() - t0
    loaded.info = {"name": out.name if out else task.name, **base_info, **run_info,
                   "history": subsample_history(history), "trained_steps": step, "complete": True, "metrics": metrics, "train_seconds": round(train_seconds, 2),
                   "train_cpu_seconds": round(train_cpu, 2),
                   "wall_seconds": round(wall, 2)}
    if out is not None:
        save(step, {k: loaded.info[k] for k in ("complete", "metrics", "train_seconds", "train_cpu_seconds",
                                                "wall_seconds")})
        loaded.path = out
    from attnviz.tasks.metric_names import format_metrics

    shown = format_metrics(metrics, counts=True)  # in words: the CLI and the training tab print this line
    yield Progress(step, total, _epoch(task, items, step, total), ev.loss, ev.accuracy, ev.lr, wall,
                   ev.items_per_s, f"done in {wall:.1f} s: {shown}", done=True, result=loaded)
