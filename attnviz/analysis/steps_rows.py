"""The matrix form's attention rows for a window of queries, scored against every key a block of keys at a time.

:func:`attnviz.analysis.steps.compute_matrix_form` shows queries a…b−1 against the keys at the same positions,
but each row's softmax (and so P, Z = P V and the layer's output) runs over every key. Scoring the window's
rows against all T keys at once held (H, b − a, T) float64 arrays five or six times over (scores, scaled,
masked, the softmax's temporaries: about 380 MB at 8,190 tokens, 9 heads and a 128-row window). Here the keys
come in blocks of about :data:`KEY_BLOCK_CELLS` cells and the softmax is done in two passes: the rows' maxima
first, then exp(masked − max) summed and multiplied into V block by block; the shown columns keep every stage
(Q Kᵀ, scaled, capped, masked, P). The arithmetic is the one of :func:`attnviz.analysis.steps.softmax`
(−inf entries give 0, a fully masked row is all 0), in float64; only the order of the sums differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.analysis.steps_inputs import soft_cap

__all__ = ["ScoredRows", "scored_rows", "KEY_BLOCK_CELLS"]

# (heads × rows × keys) float64 cells of each stage computed at a time: 2 MB (227 keys for 9 heads × 128 rows)
KEY_BLOCK_CELLS = 1 << 18


@dataclass
class ScoredRows:
    """The shown columns' stages (H, Tq, c) and every row's output Z (H, Tq, dh)."""

    QK: np.ndarray
    scaled: np.ndarray
    capped: np.ndarray | None
    bias: np.ndarray | None
    masked: np.ndarray
    P: np.ndarray
    Z: np.ndarray


def _blocks(n: int, shown: tuple[int, int], step: int) -> list[tuple[int, int]]:
    """[c0, c1) key blocks covering 0…n: the shown columns as one block, the rest in blocks of ``step``."""
    ka, kb = shown
    out = [(c, min(c + step, ka)) for c in range(0, ka, step)] + [(ka, kb)]
    return out + [(c, min(c + step, n)) for c in range(kb, n, step)]


def scored_rows(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float, cap: float | None, mask: np.ndarray,
                bias, shown: tuple[int, int], sinks: np.ndarray | None = None) -> ScoredRows:
    """Attention of the query rows ``Q`` over every key, with the stages of the ``shown`` key columns.

    Parameters
    ----------
    Q : (H, Tq, dh) float64, after the rotation where the model rotates.
    K, V : (H_kv, Tk, dh) float64; query head h reads key/value head h // (H / H_kv).
    scale, cap : the model's score scale and soft-cap (None: none).
    mask : a function (c0, c1) → (Tq, c1 − c0) float64, the rows' additive mask (0 or −inf) over keys c0…c1−1.
    bias : None, or (array, a, b): an additive (H or 1, ·, Tk) bias whose rows a…b−1 are these queries'
        (read a key block at a time).
    shown : [ka, kb) the key columns whose stages are returned.
    sinks : None, or (H,) learned attention sinks (GPT-OSS): one more logit per head in every row's
        normaliser, as in :func:`attnviz.analysis.steps.softmax`.

    Returns
    -------
    ScoredRows: QK, scaled, capped (None without a cap), bias (None without one), masked and P of the shown
    columns, each (H, Tq, kb − ka); Z (H, Tq, dh) = softmax over every key times V.
    """
    H, Tq, dh = Q.shape
    n_kv, n_k = K.shape[0], K.shape[1]
    group = H // n_kv
    Qg = np.ascontiguousarray(Q).reshape(n_kv, group * Tq, dh)  # query heads grouped by the key head they read
    step = max(1, KEY_BLOCK_CELLS // max(1, H * Tq))
    blocks = _blocks(n_k, shown, step)

    def bias_block(c0: int, c1: int) -> np.ndarray:
        arr, a, b = bias
        return np.broadcast_to(np.asarray(arr[:, a:b, c0:c1], dtype=np.float64), (H, Tq, c1 - c0))

    def stages(c0: int, c1: int) -> dict:
        """Every stage of the shown columns (each its own array: they are on screen)."""
        qk = (Qg @ K[:, c0:c1].transpose(0, 2, 1)).reshape(H, Tq, c1 - c0)  # (H_kv, group·Tq, c) → (H, Tq, c)
        scaled = qk * scale
        capped = soft_cap(scaled, cap)
        got = {"QK": qk, "scaled": scaled, "capped": capped if cap else None, "bias": None}
        s = capped
        if bias is not None:
            got["bias"] = bias_block(c0, c1)
            s = s + got["bias"]
        got["masked"] = s + mask(c0, c1)[None]
        return got

    def masked(c0: int, c1: int) -> np.ndarray:
        """The masked scores of keys c0…c1−1 alone, the same operations in place (one array a block)."""
        s = (Qg @ K[:, c0:c1].transpose(0, 2, 1)).reshape(H, Tq, c1 - c0)
        s *= scale
        s = soft_cap(s, cap)
        if bias is not None:
            s += bias_block(c0, c1)
        s += mask(c0, c1)[None]
        return s

    top = np.full((H, Tq), -np.inf)
    kept = None
    for c0, c1 in blocks:  # pass 1: each row's maximum over every key
        if (c0, c1) == shown:
            kept = stages(c0, c1)
            m = kept["masked"]
        else:
            m = masked(c0, c1)
        if c1 > c0:
            top = np.maximum(top, m.max(axis=-1))
        del m
    sink = None if sinks is None else np.asarray(sinks, dtype=np.float64)[:, None, None]  # (H, 1, 1)
    if sink is not None:
        top = np.maximum(top, sink[..., 0])
    top = np.where(np.isfinite(top), top, 0.0)[..., None]  # a fully masked row: avoid inf − inf
    total = np.zeros((H, Tq, 1)) if sink is None else np.exp(sink - top)  # the sink: only in the normaliser
    zsum = np.zeros((n_kv, group * Tq, dh))
    e_shown = None
    for c0, c1 in blocks:  # pass 2: exp(masked − max), its sum and its product with V, a key block at a time
        if (c0, c1) == shown:
            e = e_shown = np.exp(kept["masked"] - top)  # (H, Tq, c)
        else:
            e = masked(c0, c1)
            e -= top
            np.exp(e, out=e)
        total += e.sum(axis=-1, keepdims=True)
        zsum += e.reshape(n_kv, group * Tq, c1 - c0) @ V[:, c0:c1]
        del e
    P = np.divide(e_shown, total, out=np.zeros_like(e_shown), where=total > 0)
    Z = np.divide(zsum.reshape(H, Tq, dh), total, out=np.zeros((H, Tq, dh)), where=total > 0)
    return ScoredRows(QK=kept["QK"], scaled=kept["scaled"], capped=kept["capped"],
                      bias=None if kept["bias"] is None else kept["bias"].copy(), masked=kept["masked"], P=P, Z=Z)
