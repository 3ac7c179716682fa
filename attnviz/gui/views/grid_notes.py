"""The notes under the All heads grid's tiles (entropy · distance), all drawn by one graphics item.

BERT-base has 144 heads: one pyqtgraph TextItem per note cost ~30 ms to set and ~20 ms to paint on
every keystroke (each is a QGraphicsTextItem with its own text document). This item keeps the strings
and draws them as a TextItem would: in scene units (the text does not zoom with the grid; figure
export scales the scene, and the notes with it), horizontally centred on an anchor point, its top
a text document's margin below it.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF

__all__ = ["GridNotes"]

DOC_MARGIN = 4.0  # px: QTextDocument's default margin, which a TextItem puts around its text


class GridNotes(pg.GraphicsObject):
    """One string per (row, column) under anchor points given in the view's coordinates."""

    def __init__(self):
        super().__init__()
        self.texts: list[list[str]] = []
        self.anchors: list[list[tuple[float, float]]] = []
        self.font = QFont()
        self.colour = QColor("black")
        self._bounds = QRectF()
        self.window: tuple[range, range] | None = None  # (rows, columns) drawn; None: every note

    def set_grid(self, anchors: list[list[tuple[float, float]]], bounds: QRectF) -> None:
        """Anchor (x, y) of every note; ``bounds`` a rectangle (view coordinates) holding all of them. The texts are
        kept when the grid's shape is (the rows' pitch changed: presented, all_heads_presented.py)."""
        self.prepareGeometryChange()
        if [len(row) for row in anchors] != [len(row) for row in self.anchors]:
            self.texts = [["" for _ in row] for row in anchors]
        self.anchors = anchors
        self._bounds = QRectF(bounds)
        self.update()

    def set_window(self, rows: range | None, cols: range | None = None) -> None:
        """Draw only the notes of ``rows`` × ``cols`` (the page of tiles on screen); None: all."""
        self.window = None if rows is None else (rows, cols)
        self.update()

    def drawn(self) -> list[tuple[int, int]]:
        """(row, column) of every note drawn (with a text)."""
        rows, cols = self.window or (range(len(self.texts)), range(max(map(len, self.texts), default=0)))
        return [(r, c) for r in rows if 0 <= r < len(self.texts) for c in cols
                if 0 <= c < len(self.texts[r]) and self.texts[r][c]]

    def text_rect(self, row: int, col: int, device=None) -> QRectF:
        """Where note (row, col) is drawn, in scene coordinates: its text's own width, one line tall."""
        metrics = QFontMetricsF(self.font, device) if device is not None else QFontMetricsF(self.font)
        at = self.sceneTransform().map(QPointF(*self.anchors[row][col]))
        width = metrics.horizontalAdvance(self.texts[row][col])
        return QRectF(at.x() - width / 2, at.y() + DOC_MARGIN, width, metrics.height())

    def set_texts(self, texts: list[list[str]]) -> None:
        self.texts = texts
        self.update()

    def text(self, row: int, col: int) -> str:
        return self.texts[row][col]

    def all_texts(self) -> list[str]:
        return [t for row in self.texts for t in row]

    def set_font(self, font: QFont) -> None:
        self.font = QFont(font)
        self.update()

    def set_colour(self, colour) -> None:
        self.colour = pg.mkColor(colour)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self._bounds

    def paint(self, p, *args) -> None:
        if not self.texts:
            return
        to_scene = self.sceneTransform()
        from_scene, ok = to_scene.inverted()
        if not ok:
            return
        p.save()
        p.setWorldTransform(from_scene * p.worldTransform())  # the painter now draws in scene units
        p.setFont(self.font)
        p.setPen(self.colour)
        line = QFontMetricsF(self.font, p.device()).height() if p.device() is not None else \
            QFontMetricsF(self.font).height()
        align = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
        for row, col in self.drawn():
            at = to_scene.map(QPointF(*self.anchors[row][col]))
            p.drawText(QRectF(at.x() - 500.0, at.y() + DOC_MARGIN, 1000.0, line), align, self.texts[row][col])
        p.restore()
