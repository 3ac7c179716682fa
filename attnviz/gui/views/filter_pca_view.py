"""FilterPCAView: principal components of the patch-embedding filters (the ViT paper's figure 7, left).

The filters are model weights, not activations: the view takes them from the Trace (key
``emb.patch_weight``, (D, C, P, P)) when capture stored them, or from :meth:`set_filters`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QFrame, QScrollArea

from attnviz.analysis import compute_filter_pca
from attnviz.errors import AttnvizError
from attnviz.gui.style import colour_lut
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.heatmap_data import colourize, quantize, tile_mosaic
from attnviz.gui.widgets.title import centre_lines, make_title, set_title

__all__ = ["FilterPCAView", "FILTER_KEY"]

FILTER_KEY = "emb.patch_weight"
N_COMPONENTS = 28
COLS = 7  # tiles a row at most (the ViT paper's figure)
MIN_TILE_PX = 56  # a tile is at least this wide, and as wide as its caption: fewer a row in a narrow dock
NOISE_GREY = "#888888"
TEXT_MODEL = "Patch filters belong to image models: this model reads tokens, not image patches"


def component_tiles(components: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """(k, P, P, C) components → (k, P, P, 4) RGBA.

    Colour filters (C=3) are shown as RGB, each component stretched to its own min..max (the ViT
    paper's figure). One channel is signed data: the diverging ``lut``, each component on −m..m
    (m its largest magnitude), so 0 is the middle colour and the sign reads honestly.
    """
    k, P, _, C = components.shape
    if C == 3:
        lo = components.min(axis=(1, 2, 3), keepdims=True)
        hi = components.max(axis=(1, 2, 3), keepdims=True)
        unit = (components - lo) / np.where(hi > lo, hi - lo, 1.0)  # (k, P, P, C) in [0, 1]
        rgba = np.full((k, P, P, 4), 255, np.uint8)
        rgba[..., :3] = (unit * 255).round().astype(np.uint8)
        return rgba
    m = np.abs(components[..., 0]).max(axis=(1, 2), keepdims=True)  # (k, 1, 1)
    m = np.where(m > 0, m, 1.0)
    return colourize(quantize(components[..., 0] / m, 1.0, vmin=-1.0), lut)


class FilterPCAView(BaseView):
    title = "Patch filters (PCA)"
    tab_title = "Patch filters"  # the dock's tab: twelve tabs fit a 1920-px window without scrolling

    def _build(self) -> None:
        self.title_item = make_title()
        self.vb = pg.ViewBox(invertY=True, enableMenu=False, lockAspect=True)
        self.vb.setAspectLocked(True)
        self.vb.setMouseEnabled(False, False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.vb.addItem(self.image)
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.vb, row=1, col=0)
        # which components are noise, under the tiles (in the title it wrapped to seven lines in a narrow dock)
        self.note_item = make_title()
        self.figure.addItem(self.note_item, row=2, col=0)
        self.captions: list[pg.TextItem] = []
        self.filters: np.ndarray | None = None
        self.components = self.ratio = None
        # a narrow dock (1280×720: ~270 px) gets fewer tiles a row, each legible, and scrolls rather than shrinking
        # them (seven a row drew 30-px tiles under overlapping captions)
        self.cols, self._width = COLS, 0.0  # tiles a row; the width they were laid out for
        self._room_h = 0.0  # an export's height for the tiles (0: the screen, which scrolls)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.layout().replaceWidget(self.canvas, self.scroll)
        self.scroll.setWidget(self.canvas)
        # the tiles fit the viewport's width, measured when the viewport itself is resized: a view resized
        # behind another dock tab got its own (deferred) resize before its viewport's, kept the width it had
        # been laid out for and drew seven tiles a row in a 260 px dock at 1280×720
        self.scroll.viewport().installEventFilter(self)
        self.vb.sigResized.connect(self._anchor_top)

    def _cell_px(self) -> float:
        """Pixels a tile (with its gap) needs: its caption's width, at least MIN_TILE_PX."""
        return max(MIN_TILE_PX, QFontMetricsF(self.style.font(1.0)).horizontalAdvance("100.0%") + 12)

    def _cols_for(self, width: float) -> int:
        most = max(2, min(COLS, int((width - 24) // self._cell_px()))) if width > 0 else COLS
        if self._room_h <= 0 or self.ratio is None:
            return most
        # an export whose height bounds the tiles: as many a row as draws them largest (seven a row in four rows
        # used 40 % of a 16:9 slide's width, deck page 14); rows of equal length first, then fewer a row
        n, line = len(self.ratio), QFontMetricsF(self.style.font(1.0)).height()

        def tile(cols: int) -> tuple[float, bool, int]:
            return min((width - 24) / cols, self._room_h / -(-n // cols) - 2.8 * line), n % cols == 0, -cols

        return max(range(most, 2 * COLS + 1), key=tile)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.scroll.viewport() and event.type() == QEvent.Type.Resize:
            self._room_h = 0.0
            self._fit_columns(event.size().width())
        return super().eventFilter(obj, event)

    def _after_relayout(self) -> None:  # an export: as many a row as its width holds
        # the page's height bounds the tiles too (the screen scrolls instead): the captions' room is set for it
        room = self.vb.geometry().height()
        redraw = abs(room - self._room_h) > 8
        self._room_h = room
        self._fit_columns(self.figure.geometry().width(), screen=False)
        if redraw:
            self._draw()

    def _fit_columns(self, width: float, screen: bool = True) -> None:
        cols = self._cols_for(width)
        if cols != self.cols or abs(width - self._width) > 8:
            self.cols, self._width = cols, width
            self._draw()
        elif screen:
            self._fit_height()

    def _pitch_px(self) -> float:
        """Pixels from one tile's left edge to the next's at the width laid out for."""
        return max(self._cell_px(), (self._width - 24) / self.cols) if self._width > 0 else self._cell_px()

    def _fit_height(self) -> None:
        """The canvas as tall as its rows need at their width, captions included (the dock then scrolls: in a
        short one the tiles shrank with the height and their captions ran into the next row)."""
        n = len(self.ratio) if self.ratio is not None else 0
        rows = -(-n // self.cols) if n else 0
        line = QFontMetricsF(self.style.font(1.0)).height()
        title = self.title_item.boundingRect().height() + self.note_item.boundingRect().height()
        self.canvas.setMinimumHeight(int(rows * (self._pitch_px() + 2.9 * line) + title + 2 * line) if n else 0)

    def set_filters(self, weight) -> None:
        """Use this (D, C, P, P) patch-embedding weight (e.g. ``model.embed.proj.weight``)."""
        self.filters = None if weight is None else np.asarray(weight, dtype=np.float64)
        self._draw()

    @classmethod
    def not_offered_for(cls, trace) -> str | None:
        return TEXT_MODEL if trace.grid is None else None

    @classmethod
    def not_offered_for_model(cls, config) -> str | None:
        return TEXT_MODEL if config.kind != "vit" else None  # (a trace has a grid for a ViT alone)

    def _trace_changed(self) -> None:
        # a new trace brings its own filters or none: never the previous (image) model's
        has = self.trace is not None and FILTER_KEY in self.trace
        self.filters = np.asarray(self.trace[FILTER_KEY], dtype=np.float64) if has else None
        self._draw()

    def _style_changed(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self.filters is None:
            self._clear(TEXT_MODEL if self.trace is None or self.trace.grid is None else
                        "This image model's recording carries no patch-embedding filters")
            return
        try:
            self.components, self.ratio = compute_filter_pca(self.filters, N_COMPONENTS)
        except AttnvizError as exc:
            self._clear(str(exc))
            return
        tiles = component_tiles(self.components, colour_lut(self.style, diverging=True))
        P = tiles.shape[1]
        gap = max(1, P // 4)
        cols = self.cols
        # room under each tile for its two-line caption: in tile units at the tile's width on screen
        line = QFontMetricsF(self.style.font(1.0)).height()
        pitch = self._pitch_px()
        n_rows = -(-len(tiles) // cols)
        if self._room_h > 0:  # an export whose height bounds the tiles: they shrink, the captions' lines do not
            # (the deck's page 14 drew the room for a 170 px pitch under 120 px tiles: captions over the next row)
            pitch = min(pitch, (0.96 * self._room_h / n_rows - 2.8 * line) * (P + gap) / P)  # a row: P units + captions
            pitch = max(pitch, 8.0)
        cap_h = 2.8 * line * (P + gap) / pitch  # two lines and a gap above the next row
        rows = []
        for start in range(0, len(tiles), cols):
            rows.append(tile_mosaic(tiles[start:start + cols], cols, gap))
        pad = np.zeros((int(np.ceil(cap_h)), rows[0].shape[1], 4), np.uint8)
        mosaic = np.concatenate([np.concatenate([r, pad]) for r in rows])
        self.image.setImage(mosaic, autoLevels=False, levels=None)
        self.image.setRect(QRectF(0, 0, mosaic.shape[1], mosaic.shape[0]))
        for c in self.captions:
            self.vb.removeItem(c)
        self.captions = []
        row_h = rows[0].shape[0] + pad.shape[0]
        from attnviz.analysis.pca import broken_stick

        # components that explain no more than a random split of the variance would: marked as noise
        D, C, P_, _ = self.filters.shape
        stick = broken_stick(min(D - 1, C * P_ * P_), len(self.ratio))
        noise = [i for i, (share, b) in enumerate(zip(self.ratio, stick)) if share < b]
        first_noise = noise[0] if noise else None
        for i, share in enumerate(self.ratio):
            r, c = divmod(i, cols)
            is_noise = first_noise is not None and i >= first_noise
            colour = self.style.foreground if not is_noise else NOISE_GREY
            item = pg.TextItem(f"PC{i + 1}\n{share:.1%}", color=colour, anchor=(0.5, 0))
            item.setFont(self.style.font(1.0))
            centre_lines(item.textItem)  # "PC1" over "22.4%", not at its left end
            item.setPos(c * (P + gap) + P / 2, r * row_h + P + 0.5)
            self.vb.addItem(item)
            self.captions.append(item)
        self._anchor_top()
        total = float(np.sum(self.ratio))
        said = (f"Grey: PC{first_noise + 1}–{len(self.ratio)} explain less than a random split of the variance "
                f"would (broken stick), ≤ {max(self.ratio[first_noise:]):.2%} each: noise, not structure"
                if first_noise is not None else "Every component explains more than a random split of the variance "
                                               "would (broken stick)")
        set_title(self.title_item, f"First {len(self.ratio)} principal components of the {self.filters.shape[0]} "
                  f"patch-embedding filters ({total:.1%} of their variance)", self.style)
        set_title(self.note_item, said, self.style, 1.0)
        self.note_item.setVisible(True)
        self._fit_height()

    def _anchor_top(self, *_args) -> None:
        """The tiles right under the title when the box is taller than they need (an aspect-locked range is
        centred: presented full screen at 1280×720 the first row sat ~140 px under the title, the last rows and
        the noise note scrolled out of view); centred across when the height is what limits them."""
        if self.ratio is None or self.image.image is None:
            return
        h, w = self.image.image.shape[:2]
        vw, vh = self.vb.width(), self.vb.height()
        if vw <= 0 or vh <= 0:
            return
        pad = 0.02 * max(w, h)
        span_h = (w + 2 * pad) * vh / vw
        if span_h < h + 2 * pad:
            self.vb.autoRange(padding=0.02)
        else:
            self.vb.setRange(xRange=(-pad, w + pad), yRange=(-pad, span_h - pad), padding=0)

    def _clear(self, message: str) -> None:
        self.components = self.ratio = None
        self.image.clear()
        for c in self.captions:
            self.vb.removeItem(c)
        self.captions = []
        set_title(self.title_item, message, self.style)
        set_title(self.note_item, "", self.style, 1.0)
        self.note_item.setVisible(False)
