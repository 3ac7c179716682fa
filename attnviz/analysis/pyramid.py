"""A max-pooled level-of-detail pyramid of one attention map, for panning and zooming very long inputs.

Level 0 is the (T_q, T_k) map itself (not copied); level ℓ holds the maximum of every 2^ℓ × 2^ℓ block,
so a one-token-wide diagonal stays visible at every zoom and the colour scale's top stays the true
maximum. A viewport asks for the finest level with at most one value per screen pixel and crops it:
the image handed to the screen is never larger than the screen, whatever T is (each of its cells is the
maximum of the 1–2 screen pixels' worth of data it covers, so no peak is lost).
Memory: the levels above 0 add a third of the map (float16 input stays float16).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MaxPyramid", "PyramidView", "max_pool2"]


def _pool_cols(x: np.ndarray, out: np.ndarray) -> None:
    """out = maximum of every pair of columns of x (an odd last column stands alone: its pair is 0)."""
    c2 = x.shape[1] // 2
    np.maximum(x[:, 0:2 * c2:2], x[:, 1:2 * c2:2], out=out[:, :c2])
    if x.shape[1] % 2:
        out[:, c2] = x[:, -1]


def max_pool2(a: np.ndarray, chunk_rows: int = 512) -> np.ndarray:
    """Maximum of every 2×2 block of a non-negative 2-D array (odd edges padded with 0), same dtype.

    float16 is reduced on its bit pattern (uint16), whose order equals the order of non-negative floats
    and which numpy reduces far faster than float16 itself. Rows are pooled ``chunk_rows`` pairs at a
    time, so the temporary is a few MB however large the map (a whole-map temporary was half the map:
    268 MB at T = 16,384). Padding with 0 is never materialised: the maximum with 0 of a non-negative
    value is the value.
    """
    view = a.view(np.uint16) if a.dtype == np.float16 else a
    r, c = view.shape
    out = np.empty(((r + 1) // 2, (c + 1) // 2), dtype=view.dtype)
    tmp = np.empty((min(chunk_rows, r // 2), c), dtype=view.dtype)
    for o0 in range(0, r // 2, chunk_rows):
        o1 = min(o0 + chunk_rows, r // 2)
        rows = tmp[: o1 - o0]
        np.maximum(view[2 * o0:2 * o1:2], view[2 * o0 + 1:2 * o1:2], out=rows)
        _pool_cols(rows, out[o0:o1])
    if r % 2:  # the last row's pair is the padding
        _pool_cols(view[r - 1:r], out[r // 2:])
    return out.view(np.float16) if a.dtype == np.float16 else out


@dataclass
class PyramidView:
    """The image for one viewport: ``image`` covers data rows [row0, row1) and columns [col0, col1)."""

    image: np.ndarray
    level: int
    row0: int
    row1: int
    col0: int
    col1: int


class MaxPyramid:
    """Levels 0 … n of block-max pooled copies of ``a`` (non-negative, 2-D), down to ``min_side``."""

    def __init__(self, a: np.ndarray, min_side: int = 256):
        if a.ndim != 2:
            raise ValueError(f"a pyramid is built from one (T_q, T_k) map, got shape {a.shape}")
        self.levels = [a]
        while max(self.levels[-1].shape) > min_side:
            self.levels.append(max_pool2(self.levels[-1]))

    @property
    def shape(self) -> tuple[int, int]:
        return self.levels[0].shape

    @property
    def nbytes_extra(self) -> int:
        """Bytes held beyond the map itself."""
        return sum(lv.nbytes for lv in self.levels[1:])

    def level_for(self, rows: float, cols: float, px_h: int, px_w: int) -> int:
        """Finest level with at most one value per screen pixel along both axes of the viewport."""
        per_px = max(rows / max(px_h, 1), cols / max(px_w, 1))
        level = int(np.ceil(np.log2(per_px))) if per_px > 1 else 0
        return min(max(level, 0), len(self.levels) - 1)

    def view(self, row0: float, row1: float, col0: float, col1: float, px_h: int, px_w: int) -> PyramidView:
        """The crop of the right level covering data rows [row0, row1) and columns [col0, col1).

        The bounds are widened to whole blocks of that level (and clipped to the map), so the image's
        cells line up with the data: cell (i, j) of the crop is the block starting at data row
        ``row0 + i·2^level`` and column ``col0 + j·2^level`` of the returned bounds.
        """
        T_q, T_k = self.shape
        row0, row1 = max(0, int(np.floor(row0))), min(T_q, int(np.ceil(row1)))
        col0, col1 = max(0, int(np.floor(col0))), min(T_k, int(np.ceil(col1)))
        if row1 <= row0 or col1 <= col0:
            return PyramidView(np.zeros((0, 0), self.levels[0].dtype), 0, row0, row0, col0, col0)
        level = self.level_for(row1 - row0, col1 - col0, px_h, px_w)
        f = 1 << level
        r0, c0 = row0 // f, col0 // f
        r1, c1 = -(-row1 // f), -(-col1 // f)
        image = self.levels[level][r0:r1, c0:c1]
        return PyramidView(image, level, r0 * f, min(r1 * f, T_q), c0 * f, min(c1 * f, T_k))
