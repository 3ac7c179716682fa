"""Diagonal hatching for masked cells, drawn as plain lines so PNG, SVG and PDF all show it."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPaintEngine, QPainterPath, QPen, QPolygonF

__all__ = ["draw_hatch", "HatchItem", "mask_path"]


def _vector_device(p) -> bool:
    engine = p.paintEngine()
    return engine is not None and engine.type() in (QPaintEngine.Type.SVG, QPaintEngine.Type.Picture)


def draw_hatch(p, rect: QRectF, colour: QColor, spacing: float = 6.0, width: float = 1.0, clip=None) -> None:
    """Hatch ``rect`` (optionally only inside the QPainterPath ``clip``) with 45° lines.

    On raster devices a pattern brush does it fast (clipping many lines to a staircase is slow);
    SVG has no pattern brushes, so there the lines are drawn one by one and stay vector.
    """
    if not _vector_device(p):
        brush = QBrush(colour, Qt.BrushStyle.BDiagPattern)
        p.save()
        if clip is not None:
            p.fillPath(clip, brush)
        else:
            p.fillRect(rect, brush)
        p.restore()
        return
    p.save()
    if clip is not None:
        p.setClipPath(clip, Qt.ClipOperation.IntersectClip)
    p.setClipRect(rect, Qt.ClipOperation.IntersectClip)
    p.setPen(QPen(colour, width))
    h = rect.height()
    x = rect.left() - h
    lines = []
    while x < rect.right():
        lines.append(QLineF(QPointF(x, rect.bottom()), QPointF(x + h, rect.top())))
        x += spacing
    p.drawLines(lines)
    p.restore()


def mask_path(masked: np.ndarray) -> QPainterPath:
    """Outline of the True cells of a (rows, cols) bool array, in cell units (x = column, y = row).

    Causal and padding masks mask a suffix of every row; those become one staircase polygon.
    Anything else falls back to one rectangle per run, merged across identical consecutive rows.
    """
    m = np.asarray(masked, dtype=bool)
    rows, cols = m.shape
    path = QPainterPath()
    if not m.any():
        return path
    # first masked column of each row if the row's mask is a suffix, else -1
    any_row = m.any(axis=1)
    start = np.where(any_row, m.argmax(axis=1), cols)
    suffix = all(m[i, start[i]:].all() for i in range(rows) if any_row[i])
    if suffix:
        pts = [QPointF(cols, 0)]
        for i, s in enumerate(start):
            pts += [QPointF(float(s), i), QPointF(float(s), i + 1)]
        pts.append(QPointF(cols, rows))
        path.addPolygon(QPolygonF(pts))
        path.closeSubpath()
        return path
    prev, top = None, 0
    for i in range(rows + 1):
        runs = _runs(m[i]) if i < rows else None
        if runs != prev:
            for a, b in prev or ():
                path.addRect(QRectF(a, top, b - a, i - top))
            prev, top = runs, i
    return path


def _runs(row: np.ndarray) -> tuple[tuple[int, int], ...]:
    d = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    return tuple(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


class HatchItem(pg.GraphicsObject):
    """Hatches a path given in data coordinates, with line spacing fixed in device pixels.

    A pattern brush would scale with the view (huge at T=8, invisible at T=4096) and is not kept
    by every export backend; explicit lines in device space are.
    """

    def __init__(self):
        super().__init__()
        self.path = QPainterPath()
        self.colour = QColor("#202020")
        self.width = 1.0
        self.setZValue(5)

    def set_path(self, path: QPainterPath) -> None:
        self.prepareGeometryChange()
        self.path = path
        self.update()

    def set_colour(self, colour: str, width: float = 1.0) -> None:
        self.colour, self.width = QColor(colour), width
        self.update()

    def boundingRect(self) -> QRectF:
        return self.path.boundingRect()

    def paint(self, p, *args):
        if self.path.isEmpty():
            return
        t = p.worldTransform()
        dev = t.map(self.path)
        p.save()
        p.resetTransform()  # hatch spacing in device pixels, whatever the zoom
        draw_hatch(p, dev.boundingRect(), self.colour, spacing=7.0 * max(1.0, self.width), width=self.width,
                   clip=dev)
        p.restore()
