"""Turn attention matrices into display images fast: block-max pooling, uint8 quantisation, colours.

Numpy only (no Qt), so a worker thread can run it too. A (T, T) head at T=4096 is 16 M values; the
screen shows about a thousand pixels per side, so the matrix is reduced by the *maximum* of each
k×k block first (:mod:`attnviz.analysis.block_pool`, re-exported here), then quantised to uint8 indices
of a 256-entry lookup table.
Hover texts always read the full-resolution matrix.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.block_pool import (  # noqa: F401 - re-exported
    MAX_PX,
    block_all,
    block_all_into,
    block_max,
    block_max_into,
    pool_factor,
)
from attnviz.gui.style import MASKED_INDEX

__all__ = ["pooled_phrase", "MAX_PX", "pool_factor", "block_max", "block_max_into", "block_all", "block_all_into", "quantize", "colourize",
           "tile_mosaic"]


def pooled_phrase(f: int) -> str:
    """A title's " · each drawn cell = max of f×f cells" ("" when f is 1), its words joined by no-break spaces:
    a narrow dock wraps the phrase whole, where at 1280×720 the head map's title broke before a lone "cells"."""
    return "\u00a0· " + f"each drawn cell = max of {f}×{f} cells".replace(" ", "\u00a0") if f > 1 else ""


def quantize(values: np.ndarray, vmax: float, masked: np.ndarray | None = None, vmin: float = 0.0) -> np.ndarray:
    """Map values in [vmin, vmax] to uint8 0..254; cells where ``masked`` is True become 255.

    Parameters
    ----------
    values : float array.
    vmax, vmin : the values drawn with the top and bottom colours; values outside are clipped.
    masked : optional bool array of the same shape.
    """
    span = vmax - vmin
    scale = np.float32(254.0 / span) if span > 0 else np.float32(0.0)
    if vmin:
        values = np.subtract(values, vmin, dtype=np.float32)
    q = np.multiply(values, scale, dtype=np.float32)
    # fmax/fmin, not clip: a NaN (a model with non-finite weights, said in the trace's notice) becomes the
    # bottom colour instead of an undefined cast with a NumPy warning
    np.fmax(q, 0.0, out=q)
    np.fmin(q, 254.0, out=q)
    q += np.float32(0.5)  # round to nearest when truncating below
    out = q.astype(np.uint8)
    if masked is not None:
        out[masked] = MASKED_INDEX
    return out


def colourize(indices: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """RGBA uint8 image (..., 4) of LUT indices. Handing pyqtgraph finished RGBA takes its fast path;
    an indexed image with a LUT is re-converted through a Python-built colour table on every render."""
    lut32 = np.ascontiguousarray(lut, dtype=np.uint8).view(np.uint32).reshape(-1)  # one RGBA word per entry
    return lut32[indices].view(np.uint8).reshape(indices.shape + (4,))  # 4-byte gather, ~20× faster


def tile_mosaic(tiles: np.ndarray, cols: int, gap: int = 1) -> np.ndarray:
    """Arrange (N, h, w, 4) RGBA tiles in rows of ``cols`` with ``gap`` transparent pixels between."""
    n, h, w, _ = tiles.shape
    rows = -(-n // cols)
    out = np.zeros((rows * (h + gap) - gap, cols * (w + gap) - gap, 4), np.uint8)
    for i in range(n):
        r, c = divmod(i, cols)
        out[r * (h + gap): r * (h + gap) + h, c * (w + gap): c * (w + gap) + w] = tiles[i]
    return out
