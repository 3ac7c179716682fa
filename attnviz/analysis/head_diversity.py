"""How different a layer's heads are: mean total-variation distance between their attention rows.

TV(p, q) = ½ Σ_j |p_j − q_j| is 0 for two heads that attend identically and 1 for heads that never
look at the same key. For a layer's probabilities P (H, T, T) :func:`head_tv` averages it over the
rows and over every pair of heads; :func:`layer_diversity` averages that over many inputs. A caption
that says "each head its own pattern" quotes this number. Qt-free.
"""

from __future__ import annotations

import numpy as np

__all__ = ["head_tv", "pairwise_tv", "layer_diversity"]


def pairwise_tv(probs: np.ndarray, valid_rows: np.ndarray | None = None) -> np.ndarray:
    """(H, H) mean over rows of TV between heads; ``probs`` (H, T, T) or (B, H, T, T) (batch averaged);
    ``valid_rows`` (T,) or (B, T) bool keeps only real rows (padding rows left out)."""
    P = np.asarray(probs, np.float64)
    if P.ndim == 3:
        P = P[None]
        valid_rows = None if valid_rows is None else np.asarray(valid_rows)[None]
    B, H, T, _ = P.shape
    keep = np.ones((B, T), bool) if valid_rows is None else np.asarray(valid_rows, bool)
    tv = 0.5 * np.abs(P[:, :, None] - P[:, None, :]).sum(-1)  # (B, H, H, T)
    w = keep[:, None, None, :].astype(np.float64)
    per = (tv * w).sum(-1) / np.maximum(w.sum(-1), 1)  # (B, H, H)
    return per.mean(0)


def head_tv(probs: np.ndarray, valid_rows: np.ndarray | None = None) -> float:
    """Mean TV over every pair of distinct heads (0 with a single head)."""
    tv = pairwise_tv(probs, valid_rows)
    H = tv.shape[0]
    if H < 2:
        return 0.0
    return float(tv[~np.eye(H, dtype=bool)].mean())


def layer_diversity(prob_batches) -> float:
    """Mean of :func:`head_tv` over an iterable of (probs (B, H, T, T), valid rows (B, T) or None),
    weighted by the number of inputs in each batch."""
    total, count = 0.0, 0
    for probs, valid in prob_batches:
        P = np.asarray(probs)
        b = P.shape[0] if P.ndim == 4 else 1
        total += head_tv(P, valid) * b
        count += b
    return total / max(count, 1)
