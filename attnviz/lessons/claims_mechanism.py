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

__all__ = ["six_steps", "matrix_form", "concat_heads", "causal_mask", "scale_saturation", "row_peaks"]


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
    ok = here < 1e-4 and held < 1e-4
    line = (f"x·W_Q … softmax … Σ p·v recomputed in numpy from x and the weights: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs; largest weight {row[top]:.2f} on '{trace.tokens[top]}'")
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
    here, held = _recomputation(scene, bench, trace, state.layer, n, seed, lambda r, rec: max_err(r["out"], rec["out"]))
    line = (f"concat(Z₁…Z_{trace.n_heads})·W_O + b_O equals the layer's output: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs")
    return ClaimResult("concat-heads", here, held, here < 1e-3 and held < 1e-3, line,
                       {"here": here, "held": held, "n": n, "H": trace.n_heads})


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


def row_peaks(loaded, texts) -> np.ndarray:
    """Per text: the mean over layers, heads and rows of the largest attention weight in a row."""
    out = np.zeros(len(texts))
    for idx, rec in held_out_records(loaded, texts, keep=("probs",)):
        out[idx] = np.mean([p.max(-1).mean(axis=(-1, -2)) for p in rec["probs"]], axis=0)  # (B,)
    return out


def scale_saturation(scene, bench, trace, state, p, seed, n):
    from attnviz.whatif import WhatIf, applied

    loaded = bench.model(scene.model)
    texts = [scene.text] + fresh_texts(loaded, n, seed)
    trained = row_peaks(loaded, texts)
    with applied(loaded.model, WhatIf(scale="none")):
        raw = row_peaks(loaded, texts)
    f_trained, f_raw = float(trained[1:].mean()), float(raw[1:].mean())
    here_t, here_r = float(trained[0]), float(raw[0])
    d_k = trace.meta["d_head"]
    ok = here_r > here_t and f_raw > f_trained
    line = (f"without 1/√d_k (d_k = {d_k}) the mean largest weight per row rises from {here_t:.2f} to {here_r:.2f} "
            f"here, {f_trained:.2f} → {f_raw:.2f} over {n} held-out inputs: the softmax saturates")
    return ClaimResult("scale-saturation", here_r - here_t, f_raw - f_trained, ok, line,
                       {"trained": here_t, "raw": here_r, "held_trained": f_trained, "held_raw": f_raw, "n": n,
                        "d_k": d_k, "here": here_r - here_t, "held": f_raw - f_trained})
