"""Training with and without 1/√d_k: the lecture's claim measured on real runs, shipped as data.

``python -m attnviz.training.scale_study [--out FILE] [--steps N] [--seeds 0 1 2]`` re-creates
``assets/data/scale_study.json`` (about ten minutes; ``--only`` spreads the four groups over processes, ``--merge`` joins them).

The same small model (this package's two-layer encoder, 2 heads, d_model 64, with ``d_head`` raised
to :data:`D_HEAD`) learns the ``recall-first`` task of :mod:`attnviz.training.path_length_study` (read
the first of up to 32 letters at the last position: the read-out row must find position 0) four
ways, each over several seeds: with the scale 1/√d_k and without it (``attn_scale`` 1), from two
initialisations of W_Q and W_K:

* ``unit``: q and k start with unit-variance components (W std 1/√d_model on layer-normed inputs), the
  assumption of the lecture's argument: unscaled, q·k then has std ≈ √d_k = 16 and the softmax starts
  saturated, its gradient near zero;
* ``small``: the package's own initialisation (std 0.02): q·k starts tiny whatever the scale, so the
  unscaled run starts *less* saturated and the scale only shrinks the scores' steps.

Every :data:`EVAL_EVERY` steps the model is measured on a fixed batch of validation sequences (a seed
never used for training): loss, accuracy and the mean entropy (nats) of every attention row over
its real keys. Adam at a constant learning rate. Qt-free.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch

from attnviz.analysis.scale_training import STUDY_FILE, study_path

from attnviz.training.path_length_study import VOCAB  # the padding id of the recall-first task

__all__ = ["run_variant", "run_study", "main", "STUDY_FILE", "D_HEAD", "INITS", "SCALES", "study_path"]

D_HEAD = 256
INITS = ("unit", "small")
SCALES = ("scaled", "unscaled")
EVAL_EVERY = 10
N_EVAL = 128
STEPS = 120
BATCH = 32
LR = 1e-3
VAL_SEED = 4242  # validation sequences: never a training seed
SEEDS = (0, 1, 2)
FORMAT = "attnviz-scale-study"



def build_model(scaled: bool, init: str, seed: int, d_head: int = D_HEAD):
    """The study's model: :class:`~attnviz.training.path_length_study.AttentionReader` (2 layers, 2 heads,
    d_model 64) with ``d_head`` per head, the scale 1/√d_head or none, and W_Q, W_K initialised
    ``unit`` (std 1/√d_model: q, k components of unit variance) or ``small`` (the package's std 0.02)."""
    from attnviz.training.path_length_study import AttentionReader

    torch.manual_seed(seed)
    model = AttentionReader(d_head=d_head, attn_scale=0.0 if scaled else 1.0)
    if init == "unit":
        gen = torch.Generator().manual_seed(10_000 + seed)
        for block in model.inner.stack.blocks:
            for proj in (block.attn.q_proj, block.attn.k_proj):
                with torch.no_grad():
                    proj.weight.copy_(torch.randn(proj.weight.shape, generator=gen) / math.sqrt(proj.weight.shape[1]))
    return model


def measure(model, batch) -> dict:
    """Validation loss, accuracy and the mean attention entropy (nats) over every layer, head and real row."""
    import torch.nn.functional as F

    from attnviz.capture.batch import batch_attention

    ids, last, y = batch
    pad = ids == VOCAB
    model.eval()
    try:
        with torch.no_grad():
            logits, probs = batch_attention(model.inner, {"ids": ids, "key_pad": pad, "pool_index": last},
                                            as_numpy=False)
            ent = []
            for p in probs["self"]:  # (B, H, T, T)
                h = -(p * torch.log(p.clamp_min(1e-30))).sum(-1)  # (B, H, T)
                ent.append(h[(~pad)[:, None, :].expand_as(h)])
            out = {"loss": float(F.cross_entropy(logits, y)), "accuracy": float((logits.argmax(-1) == y).float().mean()),
                   "entropy": float(torch.cat(ent).mean())}
    finally:
        model.train()
    return out


def run_variant(scaled: bool, init: str, seed: int, steps: int = STEPS, d_head: int = D_HEAD,
                eval_every: int = EVAL_EVERY, n_eval: int = N_EVAL, stop_after: int | None = None) -> dict:
    """Train one run; returns its curves: ``step`` (0, then every ``eval_every``), ``train_loss`` (mean
    since the last point) and the validation ``loss``, ``accuracy`` and ``entropy`` at each.

    ``stop_after``: stop after this many steps (a replay of a run's beginning; the learning rate is
    constant, so the first steps are those of the full run)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # reproducible, and polite on a shared machine; restored below
    try:
        return _train(scaled, init, seed, steps, d_head, eval_every, n_eval, stop_after)
    finally:
        torch.set_num_threads(previous)


def _train(scaled, init, seed, steps, d_head, eval_every, n_eval, stop_after) -> dict:
    from attnviz.training.path_length_study import _logits, sample

    model = build_model(scaled, init, seed, d_head)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    rng = np.random.default_rng(seed)
    val = sample(np.random.default_rng(VAL_SEED), n_eval)
    curves = {"step": [], "train_loss": [], "loss": [], "accuracy": [], "entropy": []}
    window: list[float] = []

    def point(step: int) -> None:
        m = measure(model, val)
        curves["step"].append(step)
        curves["train_loss"].append(float(np.mean(window)) if window else m["loss"])
        for key in ("loss", "accuracy", "entropy"):
            curves[key].append(m[key])
        window.clear()

    point(0)
    model.train()
    for step in range(1, (stop_after or steps) + 1):
        ids, last, y = sample(rng, BATCH)
        loss = torch.nn.functional.cross_entropy(_logits("attention", model, ids, last)[0], y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        window.append(float(loss.detach()))
        if step % eval_every == 0:
            point(step)
    return curves


def run_study(seeds=SEEDS, steps: int = STEPS, d_head: int = D_HEAD, log=None, only=None) -> dict:
    """Every (init, scale, seed) run of the module docstring (``only``: just these (init, scale) pairs),
    as one JSON-able dict."""
    runs = []
    for init in INITS:
        for scale in SCALES:
            if only and (init, scale) not in only:
                continue
            for seed in seeds:
                curves = run_variant(scale == "scaled", init, seed, steps, d_head)
                runs.append({"init": init, "scale": scale, "seed": int(seed), **curves})
                if log:
                    log(f"{init:5s} {scale:8s} seed {seed}: val loss {curves['loss'][-1]:.3f}, accuracy "
                        f"{curves['accuracy'][-1]:.3f}, entropy {curves['entropy'][-1]:.2f} after {steps} steps")
    return {"format": FORMAT, "version": 1, "task": "recall-first", "d_head": d_head, "steps": steps, "lr": LR,
            "eval_every": EVAL_EVERY, "n_eval": N_EVAL, "batch_size": BATCH, "seeds": [int(s) for s in seeds],
            "command": "python -m attnviz.training.scale_study", "runs": runs}


def main(argv: list[str] | None = None) -> int:
    from attnviz.io import write_atomic

    parser = argparse.ArgumentParser(prog="python -m attnviz.training.scale_study", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help=f"default: assets/data/{STUDY_FILE}")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--only", nargs="+", metavar="INIT:SCALE", default=None,
                        help="run only these groups (e.g. unit:scaled small:unscaled), to spread the runs over "
                             "processes; --merge then joins their files")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="FILE", help="join the runs of these study files")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [json.loads(f.read_text(encoding="utf-8")) for f in args.merge]
        study = {**parts[0], "runs": [r for part in parts for r in part["runs"]]}
    else:
        only = {tuple(o.split(":", 1)) for o in args.only} if args.only else None
        study = run_study(args.seeds, args.steps, log=lambda m: print(m, flush=True), only=only)
    out = args.out or study_path()

    def write(tmp):
        Path(tmp).write_text(json.dumps(study, separators=(",", ":")), encoding="utf-8")

    write_atomic(out, write)
    print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
