"""A labelled heatmap: index image + token axes + colour bar + masked hatching + row highlight.

The image is uint8 indices (see :mod:`attnviz.gui.views.heatmap_data`) drawn through the style's
256-entry lookup table; one ImageItem is reused for every head, nothing is re-created on a switch.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QSizePolicy

from attnviz.gui.pyqtgraph_private import mark_image_rendered
from attnviz.gui.style import ViewStyle, colour_lut
from attnviz.gui.widgets.colour_bar import ColourBarItem
from attnviz.gui.widgets.hatch import HatchItem, mask_path
from attnviz.gui.widgets.square_cells import SquareCells
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.token_axis import TokenAxisItem

__all__ = ["CellImageItem", "LabelledHeatmap"]


class CellImageItem(pg.ImageItem):
    """ImageItem that reports the data cell (row, col) under the mouse and clicked cells.

    Cells are in data units of the ViewBox (x = column, y = row), independent of any pooling.
    """

    _argb_lut: tuple[np.ndarray, np.ndarray] | None = None  # (the LUT, its ARGB32 words)
    _argb: np.ndarray | None = None  # the pixels the current QImage reads

    def __init__(self):
        super().__init__(axisOrder="row-major")
        self.shape_rc = (0, 0)
        self.on_hover: Callable[[int | None, int | None], None] | None = None
        self.on_click: Callable[[int, int], None] | None = None
        self.setAcceptHoverEvents(True)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        vb = self.getViewBox()
        if vb is None:
            return None
        pt = vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(pt.y())), int(np.floor(pt.x()))
        rows, cols = self.shape_rc
        if 0 <= r < rows and 0 <= c < cols:
            return r, c
        return None

    def render(self):
        """An index image through a uint8 LUT becomes a premultiplied ARGB32 QImage, Qt's native format.

        pyqtgraph hands Qt an Indexed8 image, which Qt converts to ARGB on every paint before scaling it:
        measured 6.5 ms a paint for a 256×256 crop drawn 850×700 px (a pan frame of a zoomed long map)
        against 0.55 ms for ARGB32 premultiplied. A 256-entry table premultiplied once, then one 4-byte
        gather per pixel (as :func:`attnviz.gui.views.heatmap_data.colourize`).
        """
        img, lut = self.image, self.lut
        if (img is None or img.ndim != 2 or img.dtype != np.uint8 or img.size == 0 or self.axisOrder != "row-major"
                or not isinstance(lut, np.ndarray) or lut.dtype != np.uint8 or lut.shape[0] < 256
                or lut.shape[1] not in (3, 4)):
            super().render()
            return
        if self._argb_lut is None or self._argb_lut[0] is not lut:
            rgb = lut[:256, :3].astype(np.uint32)
            alpha = lut[:256, 3].astype(np.uint32) if lut.shape[1] == 4 else np.full(256, 255, np.uint32)
            rgb = (rgb * alpha[:, None] + 127) // 255  # premultiplied by alpha
            words = (alpha << 24) | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]  # 0xAARRGGBB
            self._argb_lut = (lut, words)
        self._argb = np.ascontiguousarray(self._argb_lut[1][img])  # (rows, cols) uint32, kept: the QImage reads it
        rows, cols = img.shape
        self.qimage = QImage(self._argb.data, cols, rows, cols * 4, QImage.Format.Format_ARGB32_Premultiplied)
        mark_image_rendered(self)

    def paint(self, p, *args):
        # cells are exact blocks: no smoothing (it blurs cell borders and costs 5-10 ms a frame)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        super().paint(p, *args)

    def hoverEvent(self, ev):
        if self.on_hover is None:
            return
        cell = None if ev.isExit() else self.cell_at(ev.scenePos())
        self.on_hover(*(cell or (None, None)))

    def mouseClickEvent(self, ev):
        if ev.button() != Qt.LeftButton or self.on_click is None:
            return
        cell = self.cell_at(ev.scenePos())
        if cell is not None:
            ev.accept()
            self.on_click(*cell)


class LabelledHeatmap(SquareCells, pg.GraphicsLayout):
    """Title, left/bottom token axes, a ViewBox with the image, and a colour bar on the right."""

    def __init__(self, style: ViewStyle | None = None, lock_aspect: bool = False, top_axis: bool | None = None,
                 max_cell_aspect: float | None = None, centred: bool = False):
        """lock_aspect: square cells, the matrix anchored top-left so the axes touch it (the column
        labels then go on top, since the spare room is on the right or at the bottom).
        max_cell_aspect: cells at most this much wider than tall, the map centred (a zoomable map).
        centred: (lock_aspect) the matrix's row held to the matrix's height, so its colour bar is as tall as the
        cells, and the height they cannot use split above and below the map, not left inside its box (maps side by
        side in a slide's middle, not along its top)."""
        super().__init__()
        self.style = style or ViewStyle()
        self.lock_aspect = lock_aspect
        self.centred = centred
        self.cell_peers = [self]  # square-cell maps drawn with one cell size (share_cells)
        self._own_px = self._drawn_px = 0.0  # the cell size this map's room allows; the one it is drawn at
        self._room_px_h = 0.0  # the cell size its height allows
        self._head = 0.0  # the height of the title and column labels above the matrix
        self._settling = False  # inside _size_square's own layout pass
        # cells at most this much wider than tall (None: as wide as the room): the map is centred in a
        # narrower box instead (a head map presented on a 16:9 screen was drawn 1.8 : 1, see setGeometry)
        self.max_cell_aspect = max_cell_aspect
        top_axis = lock_aspect if top_axis is None else top_axis
        self.indices: np.ndarray | None = None  # the uint8 LUT indices shown (255 = masked)
        self.image_bounds = (0, 0, 0, 0)  # (row0, row1, col0, col1): the data cells the image covers
        self.diverging = False  # signed data: the style's diverging colour map
        self._margins = self.layout.getContentsMargins()  # (a centred map adds to the top one)
        self.title = make_title()
        self.addItem(self.title, row=0, col=0, colspan=4 if lock_aspect else 3)
        self.vb = pg.ViewBox(invertY=True, enableMenu=False)
        self.vb.setDefaultPadding(0.0)
        if lock_aspect:
            self.vb.setMouseEnabled(False, False)
            # the room is measured again when the matrix's box changes with the map's size unchanged (its colour bar
            # or row labels took another width in the layout's pass)
            if centred:
                self.vb.sigResized.connect(self._size_square)
            self.vb.sigResized.connect(self._fit_square)
        else:
            self.vb.enableAutoRange(enable=True)  # re-fit the whole matrix whenever the size changes
        self.left = TokenAxisItem("left", self.style)
        self.bottom = TokenAxisItem("top" if top_axis else "bottom", self.style)
        self.bar = ColourBarItem(self.style)
        if top_axis:
            self.addItem(self.bottom, row=1, col=1)
        self.addItem(self.left, row=2, col=0)
        self.addItem(self.vb, row=2, col=1)
        self.addItem(self.bar, row=2, col=2)
        if lock_aspect:
            # square cells leave spare width: an empty column right of the bar takes it, so the bar
            # stays next to the matrix
            self.spare = pg.GraphicsWidget()
            self.spare.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
            self.addItem(self.spare, row=2, col=3)
            # and the height it cannot use goes below it (the matrix's row is held to the matrix: _size_square), so
            # the map still takes the height its parent gives it
        if lock_aspect and centred:
            self.spare_low = pg.GraphicsWidget()
            self.spare_low.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
            self.spare_low.setMinimumHeight(0)
            self.spare_low.setPreferredHeight(0)
            self.addItem(self.spare_low, row=4, col=1)
            self.layout.setRowStretchFactor(4, 1)
        if not top_axis:
            self.addItem(self.bottom, row=3, col=1)
        self.left.link_view(self.vb)
        self.bottom.link_view(self.vb)
        self.image = CellImageItem()
        self.vb.addItem(self.image)
        self.hatch = HatchItem()
        self.vb.addItem(self.hatch, ignoreBounds=True)
        # a row that wrote nothing (a decoder's last position): washed out towards the background so
        # its cells do not read as an alignment, yet still visible (and hovered with exact values)
        self.veil = QGraphicsRectItem()
        self.veil.setZValue(5)
        self.veil.setVisible(False)
        self.veil.setPen(QPen(Qt.PenStyle.NoPen))
        self.vb.addItem(self.veil, ignoreBounds=True)
        self.veiled_row: int | None = None
        # selected row: a dark and a light outline, visible on every colour of every map
        self.row_marks = [QGraphicsRectItem() for _ in range(2)]
        self.col_marks = [QGraphicsRectItem() for _ in range(2)]
        for item in self.row_marks + self.col_marks:
            item.setZValue(10)
            item.setVisible(False)
            self.vb.addItem(item, ignoreBounds=True)
        self.set_style(self.style)

    # -- data ----------------------------------------------------------------------------------
    def set_labels(self, rows, cols) -> None:
        self.left.set_labels(rows)
        self.bottom.set_labels(cols)

    def set_shape(self, shape_rc: tuple[int, int]) -> bool:
        """Make the view show all ``shape_rc`` data cells if that is a new size; True when it was."""
        rows, cols = shape_rc
        if self.image.shape_rc == (rows, cols):
            return False
        self.image.shape_rc = (rows, cols)
        if self.max_cell_aspect and getattr(self, "_given", None) is not None:
            self.setGeometry(self._given)  # another shape, another box: now (a posted relayout moved the map later)
        if self.lock_aspect:
            self._size_square()
            self._fit_square()
        else:
            # set now rather than by auto-range, which applies it while painting: the axes' answer
            # to the new range then costs the whole figure a second paint
            self.vb.setRange(xRange=(0, cols), yRange=(0, rows), padding=0, disableAutoRange=True)
        return True

    def set_image(self, img: np.ndarray, shape_rc: tuple[int, int],
                  bounds: tuple[int, int, int, int] | None = None) -> None:
        """Show uint8 indices covering ``shape_rc`` data cells (img may be pooled: fewer pixels).

        bounds : (row0, row1, col0, col1), the data cells ``img`` covers when it is a crop (a
        level-of-detail view of a long map); default all of them.
        """
        rows, cols = shape_rc
        self.indices = img
        # uint8 indices through the LUT: CellImageItem.render makes them premultiplied ARGB32 pixels
        self.image.setImage(img, autoLevels=False, levels=(0, 255), lut=colour_lut(self.style, self.diverging))
        r0, r1, c0, c1 = bounds if bounds is not None else (0, rows, 0, cols)
        new_shape = self.set_shape(shape_rc)
        if new_shape or bounds is not None or self.image_bounds != (r0, r1, c0, c1):
            self.image.setRect(QRectF(c0, r0, c1 - c0, r1 - r0))
        self.image_bounds = (r0, r1, c0, c1)
        if new_shape:
            self._settle_layout()
        # pyqtgraph applies a new range lazily, in the next paint; changing the view's transform
        # there makes Qt paint the whole figure a second time (charlm: ~6 ms a keystroke)
        self.vb.prepareForPaint()

    def _settle_layout(self) -> None:
        """Lay the figure out now: a new shape can change an axis' size (column labels slanted → upright when
        the input grows), and the relayout Qt posts for it came after the first paint, so the whole figure was
        painted twice more (the view shrank, then its cells were squared again)."""
        parent = self.parentLayoutItem()
        for _ in range(3):  # each pass may resize the view, whose new range may resize an axis again
            before = (self.bottom.height(), self.left.width(), self.vb.width(), self.vb.height())
            if parent is not None and hasattr(parent, "activate"):
                parent.activate()
            self.layout.activate()
            if (self.bottom.height(), self.left.width(), self.vb.width(), self.vb.height()) == before:
                break

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        if not hasattr(self, "image"):  # also called while constructing
            return
        # rotated column labels take at most a fifth of the figure's height: the rows keep their room
        extent = 0.2 * self.height()
        if abs(self.bottom.max_extent - extent) > 1:
            self.bottom.max_extent = extent
            self.bottom._update_size()
        if self.lock_aspect:
            self._size_square()

    def setGeometry(self, rect) -> None:
        """The box the parent layout gives, narrowed (and centred) so cells are at most ``max_cell_aspect``
        wide per unit of height: decided here, in the layout's own pass, so nothing moves after it."""
        rect = self._given = QRectF(rect)
        rows, cols = self.image.shape_rc if hasattr(self, "image") else (0, 0)
        if rows and cols and self.max_cell_aspect and not self.lock_aspect:
            lay = self.layout
            left, top, right, bottom = lay.getContentsMargins()
            fixed_w = left + right + self.left.width() + self.bar.width() + 2 * lay.horizontalSpacing()
            fixed_h = top + bottom + self.title.height() + self.bottom.height() + 2 * lay.verticalSpacing()
            cell_h = max(rect.height() - fixed_h, 1.0) / rows
            # a tall narrow map (33 decoder rows × 7 source words) had columns 8 px wide: every other word lost
            # its label. Its columns may widen to a label line, never past the map being as wide as it is tall
            aspect = max(self.max_cell_aspect, min(self.style.metrics().height() / cell_h, rows / cols))
            most = fixed_w + aspect * cell_h * cols
            if rect.width() > most + 1:
                rect = QRectF(rect.x() + (rect.width() - most) / 2, rect.y(), most, rect.height())
        super().setGeometry(rect)

    def set_levels(self, lo: float, hi: float, label: str = "") -> None:
        self.bar.set_levels(lo, hi)
        if label:
            self.bar.set_label(label)
        if getattr(self, "_scale_hidden", False):  # a map has a scale again (see hide_scale); only then: views
            self._scale_hidden = False  # that hide their bars themselves (compare) keep them hidden
            self.bar.show()

    def hide_scale(self) -> None:
        """No colour bar until the next :meth:`set_levels`: an empty map has no values for a scale to read
        (a refused input left a lone bar beside the empty head map)."""
        self._scale_hidden = True
        self.bar.hide()

    def set_diverging(self, on: bool) -> None:
        """Signed data: draw image and colour bar with the style's diverging map (call before set_image)."""
        self.diverging = bool(on)
        self.bar.set_diverging(on)
        if self.indices is not None:
            self.image.setLookupTable(colour_lut(self.style, self.diverging))

    def set_mask(self, masked: np.ndarray | None) -> None:
        """Hatch the True cells of a (rows, cols) bool array (None or all False: no hatching)."""
        show = masked is not None and bool(np.any(masked))
        self.hatch.set_path(mask_path(masked) if show else pg.QtGui.QPainterPath())
        self.bar.set_masked_legend(show)

    def set_veiled_row(self, row: int | None) -> None:
        """Wash out one row (None: none); its axis label is greyed to match."""
        rows, cols = self.image.shape_rc
        self.veiled_row = row if row is not None and 0 <= row < rows else None
        self.veil.setVisible(self.veiled_row is not None)
        if self.veiled_row is not None:
            self.veil.setRect(QRectF(0, self.veiled_row, cols, 1))
        self.left.set_dimmed(self.veiled_row)

    def set_highlight(self, row: int | None, col: int | None = None) -> None:
        rows, cols = self.image.shape_rc
        for items, idx, rect in ((self.row_marks, row, lambda i: QRectF(0, i, cols, 1)),
                                 (self.col_marks, col, lambda i: QRectF(i, 0, 1, rows))):
            for item in items:
                item.setVisible(idx is not None)
                if idx is not None:
                    item.setRect(rect(idx))
        self.left.set_selected(row)
        self.bottom.set_selected(col)

    def set_title(self, text: str) -> None:
        set_title(self.title, text, self.style)

    # -- style ---------------------------------------------------------------------------------
    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        for ax in (self.left, self.bottom):
            ax.set_style(style)
        self.bar.set_style(style)
        self.hatch.set_colour(style.foreground, max(1.0, style.line_width * 0.6))
        veil = QColor(style.background)
        veil.setAlphaF(0.78)
        self.veil.setBrush(veil)
        w = 1.5 * style.line_width
        for items in (self.row_marks, self.col_marks):
            dark, light = items
            dark.setPen(self._pen("#000000", w + 2))
            light.setPen(self._pen(style.highlight, w))
        if self.indices is not None:
            self.image.setLookupTable(colour_lut(style, self.diverging))
        self.set_title(self.title.text or "")

    @staticmethod
    def _pen(colour: str, width: float) -> QPen:
        pen = QPen(QColor(colour), width)
        pen.setCosmetic(True)
        return pen
