"""The hatched outline of a long map's masked cells in the crop on screen (data coordinates)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPainterPath, QTransform

from attnviz.gui.widgets.hatch import mask_path

__all__ = ["crop_mask_path", "CropHatch"]


def crop_mask_path(masked: np.ndarray, bounds: tuple[int, int, int, int]) -> QPainterPath:
    """Outline of the True cells of a crop's (rows, cols) grid whose cells cover data rows [r0, r1) × columns
    [c0, c1) (each cell (r1 − r0) / rows tall and (c1 − c0) / cols wide, as the image item stretches them).

    A causal crop masks a suffix of every row: one staircase polygon built with NumPy (pyqtgraph's
    array-to-path), since this runs on every pan frame of a long map; any other pattern goes through
    :func:`attnviz.gui.widgets.hatch.mask_path` and is scaled into place.
    """
    m = np.asarray(masked, dtype=bool)
    rows, cols = m.shape
    if not rows or not cols or not m.any():
        return QPainterPath()
    r0, r1, c0, c1 = bounds
    sy, sx = (r1 - r0) / rows, (c1 - c0) / cols
    start = np.where(m.any(axis=1), m.argmax(axis=1), cols)  # first masked column of each row
    if bool(np.all(m.sum(axis=1) == cols - start)):  # every row's masked cells are a suffix
        xs = np.concatenate([[cols], np.repeat(start, 2), [cols]]).astype(np.float64)
        ys = np.concatenate([[0], np.repeat(np.arange(rows), 2) + np.tile([0, 1], rows), [rows]]).astype(np.float64)
        path = pg.arrayToQPath(c0 + xs * sx, r0 + ys * sy, connect="all")
        path.closeSubpath()
        return path
    return QTransform(sx, 0, 0, sy, c0, r0).map(mask_path(m))


class CropHatch:
    """Hatches a long map's masked cells in the crop on screen, as the short map hatches its own, so "masked"
    reads apart from "not computed yet" (both grey); the outline is rebuilt only when the crop or its masked
    cells change. ``heatmap``: the :class:`~attnviz.gui.widgets.heatmap.LabelledHeatmap` drawn on."""

    def __init__(self, heatmap):
        self.heatmap, self._key, self._legend = heatmap, None, None

    def forget(self) -> None:
        """The next :meth:`show` draws again (another map)."""
        self._key = self._legend = None

    def show(self, masked: np.ndarray, bounds: tuple[int, int, int, int]) -> None:
        some = bool(masked.any())
        key = (bounds, masked.shape, hash(np.packbits(masked).tobytes()) if some else None)
        if key == self._key:
            return
        self._key = key
        self.heatmap.hatch.set_path(crop_mask_path(masked, bounds))
        if some != self._legend:  # the bar repaints (2 ms) only when its "masked" entry comes or goes, not a pan
            self._legend = some
            self.heatmap.bar.set_masked_legend(some)
