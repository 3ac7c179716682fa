"""How much the training loop's machinery costs: :func:`train` against a bare PyTorch loop.

Both run the same task, model, batch size, optimizer, schedule and gradient clipping, so the
difference is what the loop adds: progress events, history, finiteness checks, cancel checks and
attention snapshots.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from attnviz.tasks import get_task
from attnviz.training.loop import GRAD_CLIP, cpu_threads, train
from attnviz.training.schedule import lr_at, make_optimizer

__all__ = ["measure_loop_overhead", "run_bare_loop"]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    now = _clock()
    return now[0] - start[0], now[1] - start[1]


def run_bare_loop(task, steps: int, seed: int = 0, device: str = "cpu") -> tuple[float, float]:
    """(wall, CPU) seconds of a plain ``forward / backward / clip / step`` loop of ``steps`` steps
    (model build included)."""
    from attnviz.device import pick_device
    from attnviz.models.registry import build_model

    dev = pick_device(device)
    t0 = _clock()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model(task.model_config()).to(dev)
    task.prepare_model(model)  # as the training loop does
    model.train()
    opt = make_optimizer(model, task.lr, task.weight_decay, task.decay_by_name)
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, task.lr, min(task.warmup, steps // 5))
        batch = task.sample_batch("train", task.batch_size, rng).to(dev)
        loss, _, _ = task.loss(model(**batch.inputs), batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
        opt.step()
    return _since(t0)


def _time_loop(task, steps: int, seed: int, device: str, n_snapshots: int) -> tuple[float, float]:
    t0 = _clock()
    events = train(task, steps=steps, seed=seed, device=device, n_snapshots=n_snapshots)
    for ev in events:
        if ev.step == steps:
            break
    elapsed = _since(t0)  # the final evaluation is not part of the per-step cost
    events.close()
    return elapsed


def measure_loop_overhead(task="coref", steps: int = 200, repeats: int = 3, device: str = "cpu",
                          n_snapshots: int | None = None, seed: int = 0) -> dict:
    """Time :func:`train` and a bare loop alternately ``repeats`` times; compare the fastest of each.

    On a shared machine wall time mostly measures the neighbours, so the ratio is taken on the
    process's CPU time (both loops run on one intra-op thread, see :func:`cpu_threads`); the wall
    figures are reported next to it.

    Parameters
    ----------
    task : Task or str
        The task to train (a built-in name or an instance).
    steps : int
        Steps per timed run.
    n_snapshots : int, optional
        Attention snapshots per timed run; default: as many as a full run of the task takes in
        ``steps`` steps (20 over ``task.steps``), so the per-step cost matches a real run.

    Returns
    -------
    dict
        ``task``, ``steps``, ``bare_s``/``loop_s`` (CPU seconds), ``bare_wall_s``/``loop_wall_s``,
        ``ratio`` (loop / bare CPU time) and ``overhead_pct``.
    """
    task = get_task(task) if isinstance(task, str) else task
    if n_snapshots is None:
        n_snapshots = max(2, round(20 * steps / task.steps))
    previous = torch.get_num_threads()
    torch.set_num_threads(cpu_threads())  # the loop trains with these threads; the bare loop must too
    try:
        run_bare_loop(task, 3, seed, device)  # first-call costs (allocator, kernels) are not the loop's
        bare, loop = [], []
        for _ in range(repeats):
            bare.append(run_bare_loop(task, steps, seed, device))
            loop.append(_time_loop(task, steps, seed, device, n_snapshots))
    finally:
        torch.set_num_threads(previous)
    bare_cpu, loop_cpu = min(b[1] for b in bare), min(l[1] for l in loop)
    ratio = loop_cpu / bare_cpu
    return {"task": task.name, "steps": steps, "n_snapshots": n_snapshots, "bare_s": round(bare_cpu, 4), "loop_s": round(loop_cpu, 4),
            "bare_wall_s": round(min(b[0] for b in bare), 4), "loop_wall_s": round(min(l[0] for l in loop), 4),
            "ratio": round(ratio, 4), "overhead_pct": round(100 * (ratio - 1), 2)}
