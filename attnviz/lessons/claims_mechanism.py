"""Claims about the attention computation itself: the six steps, the matrix form, concat · W_O, the
causal mask and the 1/√d_k scale.

The first three recompute the layer in numpy (:mod:`attnviz.lessons.recompute`) from the recorded
input and the weights and compare with what the model recorded: on the scene's trace, and on fresh
held-out inputs run in a few batched forward passes (:func:`attnviz.lessons.workbench.held_out_records`).
Qt-free.
"""

from __future__ import annotations

import numpy as np

from attnviz.lessons.claim_result import ClaimResult
from attnviz.lessons.recompute import max_err, recompute_attention, weights_from_module, weights_from_trace
from attnviz.lessons.workbench import fresh_texts, held_out_records

__all__ = ["six_steps", "matrix_form", "concat_heads", "causal_mask", "scale_saturation"]


def _attention_module(loaded, layer: int):
    from attnviz.capture.batch import attention_modules

    return attention_modules(loaded.model)["self"][layer]


def _recomputation(scene, bench, trace, layer, n, seed, measure) -> tuple[float, float]:
    """``measure(recomputed, recorded)`` on the scene's trace and its worst value over ``n`` held-out
    inputs; ``recorded`` holds the layer's ``probs``, ``z`` and ``out`` (with a batch axis when held out)."""
    recorded = {k: np.asarray(trace[f"L{layer}.{k}"], np.float64) for k in ("probs", "z", "out")}
    here = measure(recompute_attention(trace[f"L{layer}.x"], trace[f"L{layer}.mask"], weights_from_trace(trace, layer)),
                   recorded)
    loaded = bench.model(scene.model)
    w = weights_from_module(_attention_module(loaded, layer))
    held = 0.0
    for _, rec in held_out_records(loaded, fresh_texts(loaded, n, seed)):
        got = recompute_attention(rec["x"][layer], rec["mask"][layer], w)
        held = max(held, measure(got, {k: rec[k][layer] for k in ("probs", "z", "out")}))
    return here, held


def six_steps(scene, bench, trace, state, p, seed, n):
    def err(r, rec):
        q = min(state.query or 0, rec["probs"].shape[-1] - 1)  # the held-out inputs may be shorter
        return max(max_err(r["P"][..., state.head, q, :], rec["probs"][..., state.head, q, :]),
                   max_err(r["z"][..., state.head, q, :], rec["z"][..., state.head, q, :]))

    here, held = _recomputation(scene, bench, trace, state.layer, n, seed, err)
    r = recompute_attention(trace[f"L{state.layer}.x"], trace[f"L{state.layer}.mask"],
                            weights_from_trace(trace, state.layer))
    row = r["P"][state.head, state.query]
    top = int(np.argmax(row))
    # ``max_top``: the figure must show z as a mix of values, not one value (a one-hot row makes z = v_j)
    max_top = p.get("max_top")
    ok = here < 1e-4 and held < 1e-4 and (max_top is None or row[top] < float(max_top))
    line = (f"x·W_Q … softmax … Σ p·v recomputed in numpy from x and the weights: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs; largest weight {row[top]:.2f} on '{trace.tokens[top]}' "
            f"(layer {state.layer} head {state.head})" + (f", need < {float(max_top):.2f}" if max_top is not None else ""))
    return ClaimResult("six-steps", here, held, ok, line, {"here": here, "held": held, "n": n, "top_weight": float(row[top]),
                                                           "top_token": trace.tokens[top], "row_sum": float(row.sum())})


def matrix_form(scene, bench, trace, state, p, seed, n):
    here, held = _recomputation(scene, bench, trace, state.layer, n, seed, lambda r, rec: max_err(r["P"], rec["probs"]))
    T = len(trace.tokens)
    line = (f"P = softmax(QKᵀ/√d_k + M) for all {trace.n_heads} heads × {T}×{T} at once: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs")
    return ClaimResult("matrix-form", here, held, here < 1e-4 and held < 1e-4, line,
                       {"here": here, "held": held, "n": n, "T": T})


def concat_heads(scene, bench, trace, state, p, seed, n):
    """concat(Z)·W_O + b_O equals the layer output (here and held out), and the layer's heads differ: their
    mean total-variation distance over the held-out inputs ≥ ``min_tv`` (0.3), so "many heads" is not
    four copies of one pattern."""
    from attnviz.analysis.head_diversity import layer_diversity

    here, held = _recomputation(scene, bench, trace, state.layer, n, seed, lambda r, rec: max_err(r["out"], rec["out"]))
    loaded = bench.model(scene.model)
    tv = layer_diversity((rec["probs"][state.layer], None)
                         for _, rec in held_out_records(loaded, fresh_texts(loaded, n, seed), keep=("probs",)))
    need = float(p.get("min_tv", 0.3))
    line = (f"concat(Z₁…Z_{trace.n_heads})·W_O + b_O equals the layer's output: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs; layer {state.layer}'s heads differ by a mean total-variation "
            f"distance of {tv:.2f} over those inputs (need ≥ {need:.2f})")
    return ClaimResult("concat-heads", here, held, here < 1e-3 and held < 1e-3 and tv >= need, line,
                       {"here": here, "held": held, "n": n, "H": trace.n_heads, "tv": tv, "layer": state.layer})


def _mask_check(mask: np.ndarray, probs: np.ndarray) -> tuple[bool, float, int]:
    """(M is −∞ exactly above the diagonal and 0 elsewhere, largest weight on a future key, cells above)."""
    m = np.asarray(mask, np.float64).reshape(mask.shape[-2:])
    T = m.shape[0]
    upper = np.triu(np.ones((T, T), bool), 1)
    right = bool(np.all(np.isneginf(m[upper])) and np.all(m[~upper] == 0))
    leak = float(np.max(np.asarray(probs)[..., upper])) if upper.any() else 0.0
    return right, leak, int(upper.sum())


def causal_mask(scene, bench, trace, state, p, seed, n):
    layer = state.layer
    right, here, cells = _mask_check(trace[f"L{layer}.mask"], trace[f"L{layer}.probs"])
    loaded = bench.model(scene.model)
    fresh = [_mask_check(rec["mask"][layer], rec["probs"][layer])
             for _, rec in held_out_records(loaded, fresh_texts(loaded, n, seed), keep=("mask", "probs"))]
    held = max(leak for _, leak, _ in fresh)
    ok = right and all(r for r, _, _ in fresh) and here == 0.0 and held == 0.0
    T = len(trace.tokens)
    line = (f"M is −∞ on all {cells} cells above the diagonal of the {T}×{T} matrix, 0 elsewhere; largest weight on a "
            f"future token {here:g} here and {held:g} over {n} held-out inputs")
    return ClaimResult("causal-mask", here, held, ok, line, {"here": here, "held": held, "n": n, "cells": cells, "T": T})


def _head_stats(rec, layer, head, scale) -> tuple[list, list, list]:
    """Per batch of records: softmax_stats of one head's rows with the model's scale and without, and
    the raw q·k of its valid cells."""
    from attnviz.analysis.scaling import head_scores, softmax_stats

    scores, valid = head_scores(rec["q"][layer], rec["k"][layer], rec["mask"][layer], head)
    return softmax_stats(scores * scale, valid), softmax_stats(scores, valid), scores[valid]


def scale_saturation(scene, bench, trace, state, p, seed, n):
    """The lecture's reason for 1/√d_k, with numbers of the figure's own head.

    Random vectors: the spread of q·k grows like √d_k (d_k 4 → 256) and stays near 1 when scaled; at
    the model's d_k and the input's length, unscaled rows saturate (top weight up) and their softmax
    gradient shrinks. The head (scene's layer and head, on fresh held-out inputs): its raw q·k spread,
    and the mean top weight and gradient with and without the scale. Holds when the random-vector
    picture shows it (spread ×≥ 4; at d_k 256 the unscaled gradient ≤ half the scaled one) and, for this head, dropping
    the scale raises the mean top weight by ≥ ``min_rise`` (0.1): on a head whose scores are too small
    for the scale to matter (an untrained model's), it fails.
    """
    from attnviz.analysis.scaling import random_rows, random_spread

    loaded = bench.model(scene.model)
    d_k = int(trace.description.d_head)
    scale = float(_attention_module(loaded, state.layer).scale)  # the model's own, whatever the scene switches
    T = len(trace.tokens)
    spread = random_spread((4, 16, 64, 256), seed=seed)
    rows, big = random_rows(d_k, T, seed=seed), random_rows(256, T, seed=seed)
    sc, raw, dots = [], [], []
    texts = [scene.text] + fresh_texts(loaded, n, seed)
    here = None
    for idx, rec in held_out_records(loaded, texts, keep=("q", "k", "mask")):
        if 0 in idx:  # the scene's own input: its numbers alone, for "here"
            one = {k: [a[[idx.index(0)]] if k != "mask" else a for a in v] for k, v in rec.items()}
            here = _head_stats(one, state.layer, state.head, scale)
        rest = [i for i, j in enumerate(idx) if j != 0]
        if rest:
            part = {k: [a[rest] if k != "mask" else a for a in v] for k, v in rec.items()}  # mask: (1, 1, T, T)
            s, r, d = _head_stats(part, state.layer, state.head, scale)
            sc.append((s, len(rest)))
            raw.append((r, len(rest)))
            dots.append(d)

    def mean(stats):
        w = np.array([m for _, m in stats], float)
        return tuple(float(np.average([st[i] for st, _ in stats], weights=w)) for i in (0, 1))

    (top_s, grad_s), (top_r, grad_r) = mean(sc), mean(raw)
    head_spread = float(np.concatenate(dots).std())
    (here_s, _), (here_r, _), _ = here
    rise = top_r - top_s
    grows = spread[256][0] / spread[4][0]
    ok = grows >= 4 and big["raw"][1] <= 0.5 * big["scaled"][1] and rise >= float(p.get("min_rise", 0.1))
    line = (f"random q, k: std of q·k {spread[4][0]:.1f} at d_k 4 → {spread[256][0]:.1f} at 256 (scaled "
            f"{spread[4][1]:.2f} → {spread[256][1]:.2f}); at d_k {d_k} over {T} keys the softmax's top weight "
            f"{rows['scaled'][0]:.2f} → {rows['raw'][0]:.2f} unscaled, its gradient {rows['scaled'][1]:.2f} → "
            f"{rows['raw'][1]:.2f} (at d_k 256: top {big['scaled'][0]:.2f} → {big['raw'][0]:.2f}, gradient "
            f"{big['scaled'][1]:.2f} → {big['raw'][1]:.2f}). Layer {state.layer} head {state.head}: raw q·k std "
            f"{head_spread:.1f}; top weight "
            f"{here_s:.2f} → {here_r:.2f} here, {top_s:.2f} → {top_r:.2f} over {n} held-out inputs (need a rise "
            f"≥ {float(p.get('min_rise', 0.1)):.2f}); gradient {grad_s:.2f} → {grad_r:.2f}")
    return ClaimResult("scale-saturation", here_r - here_s, rise, ok, line,
                       {"d_k": d_k, "n": n, "spread_small": spread[4][0], "spread_big": spread[256][0],
                        "rand_top": rows["scaled"][0], "rand_top_raw": rows["raw"][0],
                        "rand_grad": rows["scaled"][1], "rand_grad_raw": rows["raw"][1],
                        "big_top_raw": big["raw"][0], "big_grad": big["scaled"][1], "big_grad_raw": big["raw"][1],
                        "head_spread": head_spread, "trained": here_s, "raw": here_r, "held_trained": top_s,
                        "held_raw": top_r, "grad": grad_s, "grad_raw": grad_r, "here": here_r - here_s,
                        "held": rise})
