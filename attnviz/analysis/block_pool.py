"""Block pooling of attention maps: the maximum (or the all-masked test) of every k × k block.

Numpy only. A (T, T) head at T = 4,096 is 16 M values; a picture shows about a thousand cells a side, so the
matrix is reduced by the *maximum* of each block (a one-token-wide diagonal stays visible instead of fading to
1/k, and the colour scale's top is still the true maximum). The screen's head map and thumbnails
(:mod:`attnviz.gui.views.heatmap_data`) and the long input's head overviews (:mod:`attnviz.analysis.head_overview`)
pool with these.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_PX", "pool_factor", "block_max", "block_all"]

MAX_PX = 1024  # largest image side drawn; larger matrices are block-max pooled down to this


def pool_factor(n: int, max_px: int = MAX_PX) -> int:
    """Smallest integer k with ceil(n / k) ≤ max_px."""
    return max(1, math.ceil(n / max_px))


def _padded(a: np.ndarray, kr: int, kc: int, fill) -> np.ndarray:
    *lead, r, c = a.shape
    pr, pc = -r % kr, -c % kc
    if not pr and not pc:
        return a
    out = np.full((*lead, r + pr, c + pc), fill, dtype=a.dtype)
    out[..., :r, :c] = a
    return out


def _strided_reduce(a: np.ndarray, kr: int, kc: int, op) -> np.ndarray:
    # Elementwise op over strided row/column slices of the last two axes: contiguous SIMD loops,
    # several times faster than reshape(...).max(axis=(1, 3)) on large arrays; leading axes (the
    # heads of a layer) go through the same loops at once
    rows = a[..., 0::kr, :].copy() if kr > 1 else a
    for i in range(1, kr):
        op(rows, a[..., i::kr, :], out=rows)
    if kc == 1:
        return np.ascontiguousarray(rows)
    out = np.ascontiguousarray(rows[..., 0::kc])
    for j in range(1, kc):
        op(out, rows[..., j::kc], out=out)
    return out


def block_max(a: np.ndarray, kr: int, kc: int) -> np.ndarray:
    """Maximum of every kr×kc block of a non-negative float array's last two axes, as float32.

    float16 input is reduced on its bit pattern (uint16), whose order equals the order of
    non-negative floats and which numpy reduces far faster than float16.
    """
    if kr == 1 and kc == 1:
        return np.asarray(a, dtype=np.float32)
    if a.dtype == np.float16:
        bits = _padded(np.ascontiguousarray(a).view(np.uint16), kr, kc, 0)
        return _strided_reduce(bits, kr, kc, np.maximum).view(np.float16).astype(np.float32)
    a = _padded(np.asarray(a, dtype=np.float32), kr, kc, 0.0)
    return _strided_reduce(a, kr, kc, np.maximum)


def block_all(mask: np.ndarray, kr: int, kc: int) -> np.ndarray:
    """True where every cell of a kr×kc block is True (padding counts as True)."""
    return _strided_reduce(_padded(np.asarray(mask, dtype=bool), kr, kc, True), kr, kc, np.logical_and)
