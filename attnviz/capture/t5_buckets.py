"""T5's relative-position buckets, in NumPy (the score rule of a T5 layer recomputes its bias from them)."""

from __future__ import annotations

import numpy as np

__all__ = ["t5_buckets"]


def t5_buckets(rel: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
    """T5's relative-position bucket of ``rel`` = key position − query position (its own rule, in NumPy)."""
    rel = np.asarray(rel, dtype=np.int64)
    buckets = np.zeros(rel.shape, np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    small = rel < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (np.log(np.maximum(rel, 1) / max_exact) / np.log(max_distance / max_exact)
                             * (num_buckets - max_exact)).astype(np.float32).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(small, rel, large)
