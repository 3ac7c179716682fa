"""Training with and without 1/√d_k: the lecture's claim measured on real runs, shipped as data.

``python -m attnviz.training.scale_study [--out FILE] [--steps N] [--seeds 0 1 2]`` re-creates
``assets/data/scale_study.json`` (about fifteen minutes on one busy CPU core).

The same small model (the ``coref`` task's two-layer encoder and its training recipe, with
``d_head`` raised to :data:`D_HEAD`) is trained four ways, each over several seeds: with the scale
1/√d_k and without it (``attn_scale`` 1), and with two initialisations of W_Q and W_K:

* ``unit``: q and k start with unit-variance components (W std 1/√d_model on layer-normed inputs), the
  assumption of the lecture's argument: unscaled, q·k then has std ≈ √d_k = 16 and the softmax starts
  saturated, its gradient near zero;
* ``small``: the model's own initialisation (std 0.02): q·k starts tiny whatever the scale, so the
  unscaled run starts *less* saturated, and the scale's only effect is a smaller step for the scores.

Every :data:`EVAL_EVERY` steps the model is measured on a fixed batch of validation sentences (never
trained on): loss and accuracy at "it" and the mean entropy (nats) of every attention row over its
valid keys. Nothing here is tuned on the test split. Qt-free.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch

__all__ = ["run_variant", "run_study", "main", "STUDY_FILE", "D_HEAD", "INITS", "SCALES", "study_path"]

STUDY_FILE = "scale_study.json"
D_HEAD = 256
INITS = ("unit", "small")
SCALES = ("scaled", "unscaled")
EVAL_EVERY = 20
N_EVAL = 128
STEPS = 200
BATCH = 32
SEEDS = (0, 1, 2)
FORMAT = "attnviz-scale-study"


def study_path() -> Path:
    from attnviz.io import assets_dir

    return assets_dir() / "data" / STUDY_FILE


class _Watched:
    """The task as ``train`` sees it, plus: the initialisation of W_Q / W_K, and a handle on the model
    (the loop builds it; :meth:`prepare_model` is the task's public hook that receives it)."""

    def __init__(self, task, init: str, seed: int):
        self._task, self._init, self._seed = task, init, seed
        self.model = None

    def __getattr__(self, name):
        return getattr(self._task, name)

    def prepare_model(self, model) -> None:
        self._task.prepare_model(model)
        if self._init == "unit":
            gen = torch.Generator().manual_seed(10_000 + self._seed)
            for block in model.stack.blocks:
                for proj in (block.attn.q_proj, block.attn.k_proj):
                    d_in = proj.weight.shape[1]
                    with torch.no_grad():
                        proj.weight.copy_(torch.randn(proj.weight.shape, generator=gen) / math.sqrt(d_in))
        self.model = model

    def evaluate(self, loaded, seed: int = 0) -> dict:
        return {}  # the study measures on its own schedule (see measure)


def measure(model, task, batch) -> dict:
    """Validation loss and accuracy at "it", and the mean attention entropy (nats) over every layer, head
    and real row of ``batch``."""
    import torch.nn.functional as F

    from attnviz.tasks.text_data import batched_probs

    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits, probs = batched_probs(model, batch.inputs)
            loss = float(F.cross_entropy(logits, batch.targets))
            acc = float((logits.argmax(-1) == batch.targets).float().mean())
            real = ~batch.inputs["key_pad"]  # (B, T)
            ent = []
            for p in probs:  # (B, H, T, T)
                h = -(p * torch.log(p.clamp_min(1e-30))).sum(-1)  # (B, H, T)
                ent.append(h[real[:, None, :].expand_as(h)])
            entropy = float(torch.cat(ent).mean())
    finally:
        model.train(was_training)
    return {"loss": loss, "accuracy": acc, "entropy": entropy}


def run_variant(scaled: bool, init: str, seed: int, steps: int = STEPS, d_head: int = D_HEAD,
                eval_every: int = EVAL_EVERY, n_eval: int = N_EVAL, stop_after: int | None = None) -> dict:
    """Train one run; returns its curves: ``step``, ``train_loss`` (mean since the last point), and the
    validation ``loss``, ``accuracy`` and ``entropy`` at step 1 and every ``eval_every`` steps.

    ``stop_after``: stop after this many of the ``steps`` (the schedule stays that of ``steps``), so a
    replay of a run's beginning follows the shipped run exactly."""
    from attnviz.tasks.coref import CorefTask
    from attnviz.training.loop import train

    task = CorefTask()
    watched = _Watched(task, init, seed)
    val = task.sample_batch("val", n_eval, np.random.default_rng(777))
    over = {"d_head": d_head, "attn_scale": 0.0 if scaled else 1.0}
    curves = {"step": [], "train_loss": [], "loss": [], "accuracy": [], "entropy": []}
    window: list[float] = []

    def point(step: int) -> None:
        m = measure(watched.model, task, val)
        curves["step"].append(step)
        curves["train_loss"].append(float(np.mean(window)) if window else float("nan"))
        for key in ("loss", "accuracy", "entropy"):
            curves[key].append(m[key])
        window.clear()

    for ev in train(watched, steps=steps, device="cpu", seed=seed, n_snapshots=0, batch_size=BATCH,
                    config_overrides=over):
        if ev.done:
            break
        window.append(ev.loss)
        if ev.step % eval_every == 0 or ev.step == 1:
            point(ev.step)
        if stop_after is not None and ev.step >= stop_after:
            break
    return curves


def run_study(seeds=SEEDS, steps: int = STEPS, d_head: int = D_HEAD, log=None) -> dict:
    """Every (init, scale, seed) run of the module docstring, as one JSON-able dict."""
    runs = []
    for init in INITS:
        for scale in SCALES:
            for seed in seeds:
                curves = run_variant(scale == "scaled", init, seed, steps, d_head)
                runs.append({"init": init, "scale": scale, "seed": int(seed), **curves})
                if log:
                    log(f"{init:5s} {scale:8s} seed {seed}: val loss {curves['loss'][-1]:.3f}, accuracy "
                        f"{curves['accuracy'][-1]:.3f}, entropy {curves['entropy'][-1]:.2f} after {steps} steps")
    return {"format": FORMAT, "version": 1, "task": "coref", "d_head": d_head, "steps": steps,
            "eval_every": EVAL_EVERY, "n_eval": N_EVAL, "batch_size": BATCH, "seeds": [int(s) for s in seeds],
            "command": "python -m attnviz.training.scale_study", "runs": runs}


def main(argv: list[str] | None = None) -> int:
    from attnviz.io import write_atomic

    parser = argparse.ArgumentParser(prog="python -m attnviz.training.scale_study", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help=f"default: assets/data/{STUDY_FILE}")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    study = run_study(args.seeds, args.steps, log=lambda m: print(m, flush=True))
    out = args.out or study_path()

    def write(tmp):
        Path(tmp).write_text(json.dumps(study, separators=(",", ":")), encoding="utf-8")

    write_atomic(out, write)
    print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
