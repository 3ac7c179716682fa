"""Path length, RNN vs attention: the claim of the "path-length" scene, from the shipped study. Qt-free.

The study's numbers (:mod:`attnviz.analysis.path_length`) say what the lecture claims; the claim also
rebuilds both models at initialisation from the study's first seed and recomputes their input
gradients here, which must equal the stored ones: the gradients are computed, not typed in.
"""

from __future__ import annotations

import numpy as np

from attnviz.lessons.claim_result import ClaimResult

__all__ = ["path_length"]


def _recompute_init(summary: dict) -> float:
    """Largest relative difference between the stored and the recomputed gradient at initialisation."""
    from attnviz.training.path_length_study import build_models, measure

    seed = summary["models"]["rnn"]["seeds"][0]
    worst = 0.0
    for name, model in build_models(seed).items():
        m = summary["models"][name]
        got = np.asarray(measure(name, model)["grad"], float)
        want = m["grad_init"][m["seeds"].index(seed)]
        worst = max(worst, float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30))))
    return worst


def path_length(scene, bench, trace, state, p, seed, n):
    """Holds when, in every seed: at initialisation the gradient reaching the farthest token, relative
    to the nearest, is ≤ ``max_rnn_ratio`` (1e-3) for the RNN and ≥ ``min_attention_ratio`` (0.1) for
    attention (the signal a long-range dependency is learned from); trained, attention reads the
    answer from the farthest quarter of distances with accuracy ≥ ``min_accuracy`` (0.9) and beats
    the RNN there by ≥ ``min_gap`` (0.2); and the gradients at initialisation recompute here to
    ``tolerance`` (1e-3, relative)."""
    from attnviz.analysis.path_length import load_study, summarise

    s = summarise(load_study())
    rnn, att = s["models"]["rnn"], s["models"]["attention"]
    need_acc, min_gap = float(p.get("min_accuracy", 0.9)), float(p.get("min_gap", 0.2))
    max_ratio, min_ratio = float(p.get("max_rnn_ratio", 1e-3)), float(p.get("min_attention_ratio", 0.1))
    tol = float(p.get("tolerance", 1e-3))
    recomputed = _recompute_init(s)
    by_seed = dict(zip(att["seeds"], att["far_accuracy"]))
    gaps = [by_seed[sd] - acc for sd, acc in zip(rnn["seeds"], rnn["far_accuracy"]) if sd in by_seed]
    gap = float(min(gaps)) if gaps else float("nan")
    ok = (float(att["far_accuracy"].min()) >= need_acc and gap >= min_gap
          and float(np.max(rnn["grad_ratio_init"])) <= max_ratio and float(np.min(att["grad_ratio_init"])) >= min_ratio
          and recomputed <= tol)
    vals = {"far": s["far_from"], "seeds": len(rnn["seeds"]), "max_d": float(s["distances"].max()), "gap": gap,
            "rnn_far": float(rnn["far_accuracy"].mean()), "attention_far": float(att["far_accuracy"].mean()),
            "rnn_near": float(rnn["accuracy_mean"][0]), "attention_near": float(att["accuracy_mean"][0]),
            "rnn_ratio": float(np.median(rnn["grad_ratio"])), "attention_ratio": float(np.median(att["grad_ratio"])),
            "rnn_ratio_init": float(np.median(rnn["grad_ratio_init"])),
            "attention_ratio_init": float(np.median(att["grad_ratio_init"])), "recomputed": recomputed}
    vals.update(here=vals["attention_far"], held=vals["attention_far"], n=vals["seeds"])
    line = (f"{vals['seeds']} seeds. At initialisation, gradient at distance {vals['max_d']:.0f} over distance 1: RNN "
            f"{np.max(rnn['grad_ratio_init']):.1e} (largest seed, need ≤ {max_ratio:g}), attention "
            f"{np.min(att['grad_ratio_init']):.2g} (smallest, need ≥ {min_ratio:g}); trained: {vals['rnn_ratio']:.2g} "
            f"and {vals['attention_ratio']:.2g}. Accuracy with the answer ≥ {s['far_from']:.0f} tokens back: attention "
            f"{att['far_accuracy'].min():.0%} (worst seed, need ≥ {need_acc:.0%}), RNN {vals['rnn_far']:.0%} (mean; "
            f"smallest gap {gap:.2f}, need ≥ {min_gap:.2f}); gradients at initialisation recomputed here to "
            f"{recomputed:.1e} (need ≤ {tol:g})")
    return ClaimResult("path-length", vals["attention_far"], vals["attention_far"], ok, line, vals)
