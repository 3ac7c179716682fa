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

__all__ = ["MAX_PX", "pool_factor", "block_max", "block_all", "block_max_into", "block_all_into"]

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


def _fold_rows(out: np.ndarray, rows: np.ndarray, r0: int, kr: int, kc: int, pool, combine) -> None:
    """Fold map rows [r0, r0 + n) (``rows`` (..., n, C)) into ``out`` (..., blocks, C / kc), the map's kr×kc blocks
    pooled by ``pool`` (block_max, block_all), each combined with what it holds by ``combine`` (np.maximum,
    np.logical_and). A band need not be whole blocks of rows: a block cut by a band's edge is completed by the
    next band, so a caller streams a long map in bands bounded in rows × columns whatever kr is."""
    n = rows.shape[-2]
    r1 = r0 + n
    a = min(r1, -(-r0 // kr) * kr)  # the first block edge at or after r0 (r1 if the band has none)
    b = max(a, r1 // kr * kr)  # the last block edge at or before r1
    for lo, hi, k in ((r0, a, a - r0), (a, b, kr), (b, r1, r1 - b)):  # a block's end, whole blocks, a block's start
        if hi > lo:
            o = out[..., lo // kr:lo // kr + max(1, (hi - lo) // kr), :]
            combine(o, pool(rows[..., lo - r0:hi - r0, :], k, kc), out=o)


def block_max_into(out: np.ndarray, rows: np.ndarray, r0: int, kr: int, kc: int) -> None:
    """Fold map rows [r0, r0 + n) (``rows`` (..., n, C), non-negative) into ``out``, the map's kr×kc block maxima
    (zeros where nothing was folded yet). At 131,072 tokens a thumbnail's kr is 2,048 rows: bands of whole blocks
    were 2,048 × 131,072 weights, 1 GB each in float32 (see :func:`_fold_rows`)."""
    _fold_rows(out, rows, r0, kr, kc, block_max, np.maximum)


def block_all_into(out: np.ndarray, rows: np.ndarray, r0: int, kr: int, kc: int) -> None:
    """Fold bool map rows [r0, r0 + n) into ``out`` (True where nothing was folded yet): True where every cell of
    a kr×kc block is True (as :func:`block_all`, streamed: see :func:`_fold_rows`)."""
    _fold_rows(out, rows, r0, kr, kc, block_all, np.logical_and)
