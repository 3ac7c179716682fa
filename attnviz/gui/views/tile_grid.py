"""The All heads grid's thumbnails, all drawn by one graphics item.

BERT-base has 144 heads: one pyqtgraph ImageItem per thumbnail cost ~4 ms to set and ~10 ms to paint
on every keystroke (each converts its image and sets up the painter on its own). This item holds the
colourised thumbnails as one (L, H, s, s, 4) RGBA array, wraps each tile in a QImage that reads that
memory (no copy), and paints them all in one call, each into the unit square its ImageItem filled: tile
(layer, head) at x = head · pitch_x, y = layer · pitch_y, rows top to bottom as in a row-major
ImageItem, unsmoothed. Hover and click find the tile under the pointer.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage

__all__ = ["TileGrid"]


class TileGrid(pg.GraphicsObject):
    """Thumbnails (L, H) in the view's coordinates; ``on_hover(index | None)``, ``on_click(layer, head)``."""

    def __init__(self, pitch: tuple[float, float], on_hover: Callable, on_click: Callable):
        super().__init__()
        self.pitch = pitch
        self.on_hover, self.on_click = on_hover, on_click
        self.rgba = np.zeros((0, 0, 1, 1, 4), np.uint8)
        self._images: list[list[QImage]] = []
        self.window: tuple[range, range] | None = None  # (layers, heads) drawn; None: every tile
        self.setAcceptHoverEvents(True)

    @property
    def layers_heads(self) -> tuple[int, int]:
        """(layers, heads) shown (not ``shape``: QGraphicsItem.shape() is the hit-test outline)."""
        return self.rgba.shape[:2]

    def set_tiles(self, rgba: np.ndarray) -> None:
        """Show ``rgba`` (L, H, s_rows, s_cols, 4) uint8; the QImages read this array, which is kept."""
        rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
        if rgba.shape[:2] != self.rgba.shape[:2]:
            self.prepareGeometryChange()
        self.rgba = rgba
        L, H, rows, cols, _ = rgba.shape
        self._images = [[QImage(rgba[layer, h].data, cols, rows, cols * 4, QImage.Format.Format_RGBA8888)
                         for h in range(H)] for layer in range(L)]
        self.update()

    def set_window(self, layers: range | None, heads: range | None = None) -> None:
        """Draw (and answer hover and clicks for) only the tiles of ``layers`` × ``heads``: a page of a large
        grid. The view's aspect lock shows more of the grid than the page; tiles there were drawn cut at its
        edge, their notes out of sight or above the wrong row."""
        self.window = None if layers is None else (layers, heads)
        self.update()

    def drawn(self) -> list[tuple[int, int]]:
        """(layer, head) of every tile painted."""
        L, H = self.layers_heads
        rows, cols = self.window or (range(L), range(H))
        return [(layer, h) for layer in rows if 0 <= layer < L for h in cols if 0 <= h < H]

    def tile(self, layer: int, head: int) -> np.ndarray:
        """The RGBA thumbnail drawn for (layer, head)."""
        return self.rgba[layer, head]

    def tile_rect(self, layer: int, head: int) -> QRectF:
        """Where tile (layer, head) is drawn, in the view's coordinates."""
        return QRectF(head * self.pitch[0], layer * self.pitch[1], 1.0, 1.0)

    def index_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(layer, head) of the tile covering view point (x, y); None between tiles and outside."""
        L, H = self.layers_heads
        head, layer = int(np.floor(x / self.pitch[0])), int(np.floor(y / self.pitch[1]))
        if not (0 <= layer < L and 0 <= head < H):
            return None
        if self.window is not None and not (layer in self.window[0] and head in self.window[1]):
            return None  # a tile off the page is not drawn
        inside = x - head * self.pitch[0] <= 1.0 and y - layer * self.pitch[1] <= 1.0
        return (layer, head) if inside else None

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        L, H = self.layers_heads
        if not L or not H:
            return QRectF()
        return QRectF(0.0, 0.0, (H - 1) * self.pitch[0] + 1.0, (L - 1) * self.pitch[1] + 1.0)

    def paint(self, p, *args) -> None:
        if len(self._images) != self.layers_heads[0]:
            return
        for layer, head in self.drawn():
            p.drawImage(self.tile_rect(layer, head), self._images[layer][head])

    def hoverEvent(self, ev):  # noqa: N802 - pyqtgraph's name
        self.on_hover(None if ev.isExit() else self.index_at(ev.pos().x(), ev.pos().y()))

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph's name
        index = self.index_at(ev.pos().x(), ev.pos().y())
        if ev.button() == Qt.MouseButton.LeftButton and index is not None:
            ev.accept()
            self.on_click(*index)
