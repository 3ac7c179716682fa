"""ModelView: every layer × head as a thumbnail on one colour scale, with entropy and distance.

Click a thumbnail (or a table row) to select that layer and head; every other view follows.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QSizePolicy, QToolButton

from attnviz.gui.style import colour_lut
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.colour_scale import ScaleChooser, scale_note
from attnviz.gui.views.all_heads_long import LongGrid
from attnviz.gui.views.all_heads_work import AllHeadsWork, weights_in
from attnviz.gui.views.all_heads_presented import PresentedGrid, frame_pen_px
from attnviz.gui.views.all_heads_pages import (MIN_TILE_PX, NOTE_MIN_PT, NOTE_Y, PITCH_X, PITCH_Y,  # noqa: F401
                                             GridPages)
from attnviz.gui.views.grid_notes import GridNotes
from attnviz.gui.views.heads_table import HeadsTable
from attnviz.gui.views.heatmap_data import colourize
from attnviz.gui.views.tile_grid import TileGrid
from attnviz.gui.views.model_summary import (HeadStats, colour_thumbnails, summarize_stats,
                                             summarize_thumbnails, too_long_for_grid)
from attnviz.gui.views.split_stats import StatsInHalves
from attnviz.analysis.trace_parts import resolve
from attnviz.capture.trace import layer_prefix
from attnviz.gui.widgets.colour_bar import ColourBarItem
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.token_axis import TokenAxisItem

__all__ = ["ModelView"]


# attention weights up to which the grid's statistics are computed on the spot (about 1 ms for 2^17)
INLINE_STATS = 1 << 17
# weights of maps recomputed on demand (a long input) above which the thumbnails too are pooled on a worker:
# every weight is computed from q and k (about 17 million a CPU-second), too slow for the GUI thread
ON_DEMAND_INLINE = 1 << 21


class ModelView(PresentedGrid, LongGrid, GridPages, AllHeadsWork, BaseView):
    """Layers × heads thumbnails (one ImageItem each, in one ViewBox) and a sortable table."""

    title = "All heads"  # the dock's name and tooltip: "Model" is the model panel's

    def _build(self) -> None:
        self._init_work()
        self.title_item = make_title()
        self.vb = pg.ViewBox(invertY=True, enableMenu=False)
        self.vb.setMouseEnabled(False, False)
        self.vb.setAspectLocked(True)
        self.vb.sigResized.connect(self._fit_notes)  # notes shrink rather than overlap on a small grid
        self.vb.setDefaultPadding(0.01)
        self.left = TokenAxisItem("left", self.style)
        self.top = TokenAxisItem("top", self.style)
        # the page's size reads the layer labels' width: they grow after the first page names its layers while
        # the spare column keeps the grid's size (no sigResized), and a 32 × 32 caption said "heads 0–16" of 16
        self.left.geometryChanged.connect(self._fit_notes)
        self.bar = ColourBarItem(self.style, "attention weight")
        self.figure.addItem(self.title_item, row=0, col=0, colspan=5)
        self.figure.addItem(self.top, row=1, col=2)
        self.figure.addItem(self.left, row=2, col=1)
        self.figure.addItem(self.vb, row=2, col=2)
        self.figure.addItem(self.bar, row=2, col=3)
        # the width the grid cannot use goes right of the colour bar, which stays next to the tiles (presented, half
        # of it left of the grid: all_heads_presented.py)
        self.spare_left, self.spare = pg.GraphicsWidget(), pg.GraphicsWidget()
        for col, spare in ((0, self.spare_left), (4, self.spare)):
            spare.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
            spare.setMaximumWidth(0)
            self.figure.addItem(spare, row=2, col=col)
        # the title names the figure in one line; which page and what the numbers are go in a caption under
        # it (one title holding both wrapped to 7 lines at 1280×720 presenting)
        self.caption = make_title()
        self.figure.addItem(self.caption, row=3, col=0, colspan=5)
        self.left.link_view(self.vb)
        self.top.link_view(self.vb)
        # the axes name the page's layers and heads only: a click gives the index on the page
        self.left.on_click = lambda i: self._select(self._page[0] + i, self.res.head if self.res else 0)
        self.top.on_click = lambda i: self._select(self.res.layer if self.res else 0, self._page[1] + i)
        self.grid = TileGrid((PITCH_X, PITCH_Y), self._hover, self._select)  # every thumbnail, one item
        self._grid_shape = (0, 0)  # (layers, heads) the grid, its notes and axes are laid out for
        self._halves = StatsInHalves(self)
        self.vb.addItem(self.grid)
        self.notes = GridNotes()  # every note under the tiles in one item (grid_notes.py)
        self.vb.addItem(self.notes, ignoreBounds=True)
        self.marks = [QGraphicsRectItem() for _ in range(2)]
        for m in self.marks:
            m.setZValue(10)
            self.vb.addItem(m, ignoreBounds=True)
        self.thumbs = None
        self.stats: HeadStats | None = None
        self.res = None
        self._part = None
        self._title_notes: tuple[str | None, str] = (None, "")  # (part, legend) of the last statistics
        self.table = HeadsTable(self, self._select)
        self.table.hide()
        self.layout().insertWidget(2, self.table, 1)
        self.table_button = QToolButton(text="Table", checkable=True)
        self.table_button.setToolTip("Show the heads as a sortable table instead of thumbnails")
        self.table_button.toggled.connect(self.show_table)
        self.controls.addWidget(self.table_button)
        self.scale_box = ScaleChooser("fixed", "one scale for the whole grid")
        self.scale_box.follow_style(self.style.scale)
        self.scale_box.changed.connect(lambda _: self.thumbs is not None and self._draw_thumbs())  # none: refused
        self._page = (0, 0)  # first layer and first head of the page on screen
        self.page_buttons = {}
        for key, tip in (("up", "previous layers"), ("down", "next layers"), ("left", "previous heads"),
                         ("right", "next heads")):
            b = QToolButton(text={"up": "▲", "down": "▼", "left": "◀", "right": "▶"}[key])
            b.setToolTip(f"show the {tip} (the grid shows a page of heads large enough to read)")
            b.clicked.connect(lambda _c=False, k=key: self.turn_page(k))
            b.hide()
            self.page_buttons[key] = b
            self.controls.addWidget(b)
        self.controls.addSpacing(12)  # "Table" touched "colours:": two controls read as one (issue 36)
        self.controls.addWidget(QLabel("colours:"))
        self.controls.addWidget(self.scale_box)
        self.controls.addStretch(1)
        self._apply_style()

    # -- data flow -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        self._rebuild()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        part = resolve(self.trace, state).part
        if part != self._part:
            self._rebuild()
        else:
            self.res = resolve(self.trace, state)
            self._draw_marks()

    def _rebuild(self) -> None:
        self._long = None
        if self.trace is None:
            self.cancel_background()
            self._hold(False)
            self.thumbs = self.stats = self.res = self._part = None
            self._ensure_grid(0, 0)
            self.bar.hide()  # an empty view draws no scale, nor the last grid's selection frame
            for m in self.marks:
                m.hide()
            set_title(self.title_item, self.empty_text, self.style)
            self._set_caption("")
            return
        self.bar.show()
        self.res = r = resolve(self.trace, self.state)
        self._part = r.part
        trace, part = self.trace, r.part
        if too_long_for_grid(trace, part):  # every head's map is too long to compute at once: page by page
            self._start_long(trace, part)
            return
        self._pooled = None
        if layer_prefix(0, part) + "probs" not in trace.arrays and weights_in(trace, part) > ON_DEMAND_INLINE:
            self._pool_in_background(trace, part)
            return
        inline = weights_in(trace, part) <= INLINE_STATS
        if inline:
            # a small trace's statistics take about a millisecond: the grid is drawn once, complete,
            # instead of with "…" notes and again when a worker delivers them (a second paint a key)
            self.cancel_background()
            self._hold(False)
        else:
            # started before the thumbnails: the worker computes while this thread pools and colours
            # (BERT-base at T = 128: ~30 ms of statistics beside ~20 ms of drawing, on the other core)
            # (two halves of the layers on two workers: split_stats.py)
            self._halves.start(trace, part, self._stats_ready)
            self._hold(True)
        self._draw_thumbs()
        self.stats = summarize_stats(trace, part) if inline else None
        self._write_notes()
        self._set_title()
        self._draw_marks()

    def _draw_thumbs(self) -> None:
        """Thumbnails and colour bar in the chosen colour scale (statistics are left as they are)."""
        if self._long_active():
            self._draw_long()
            return
        mode = self.scale_box.mode
        pooled = getattr(self, "_pooled", None)
        if pooled is not None and pooled[0] is self.trace and pooled[1] == self._part:  # pooled on a worker
            self.thumbs = colour_thumbnails(pooled[2], scale=mode)
        else:
            self.thumbs = summarize_thumbnails(self.trace, self._part, scale=mode)
        L, H = self.thumbs.images.shape[:2]
        self._ensure_grid(L, H)
        self.grid.set_tiles(colourize(self.thumbs.images, colour_lut(self.style)))  # (L, H, s, s, 4)
        self.bar.set_levels(0.0, self.thumbs.vmax)
        if mode == "per-map":  # each tile reaches the top colour at its own maximum (hover tells it)
            self.bar.set_label("share of each head's own maximum weight")
        else:
            self.bar.set_label("attention weight · " + scale_note(mode, "layers and heads"))

    def set_stats(self, stats: HeadStats) -> None:
        """Show statistics computed elsewhere (e.g. by an app worker) for the current trace."""
        self.stats = stats
        self._write_notes()
        self._set_title()
        if self.table.isVisible():
            self._fill_table()

    # -- grid ----------------------------------------------------------------------------------
    def _ensure_grid(self, L: int, H: int) -> None:
        if self._grid_shape == (L, H):
            return
        self._grid_shape = (L, H)
        if not L:
            self.grid.set_tiles(np.zeros((0, 0, 1, 1, 4), np.uint8))
        self._place_notes()
        self.notes.setZValue(1)
        self._style_notes()
        self._page = (0, 0)
        self._apply_page()

    def _place_notes(self) -> None:
        """Each note centred below its tile's selection frame, above the next row's tiles (at the rows' pitch)."""
        L, H = self._grid_shape
        py = self._pitch_y
        self.notes.set_grid([[(h * PITCH_X + 0.5, layer * py + NOTE_Y) for h in range(H)] for layer in range(L)],
                            QRectF(-PITCH_X, -py, (H + 2) * PITCH_X, (L + 2) * py))

    def _write_notes(self) -> None:
        L, H = self._grid_shape
        self.notes.set_texts([[self._note(layer, h) for h in range(H)] for layer in range(L)])
        self._fit_notes()

    def note_text(self, layer: int, head: int) -> str:
        """The note under one tile as shown (entropy · distance, or "…" while they are computed)."""
        return self.notes.text(layer, head)

    def _note(self, layer: int, head: int) -> str:
        if self._long_active():
            return self._long_note(layer, head)
        s = self.stats
        if s is None:
            return "…"
        text = f"{s.entropy[layer, head]:.2f}"
        if s.distance is not None:
            text += f" · {s.distance[layer, head]:.1f}"
        return text

    def _set_title(self) -> None:
        if self._long_active():
            title, caption = self._long_titles()
            set_title(self.title_item, title, self.style)
            self._set_caption(caption)
            return
        r, s = self.res, self.stats
        if s is not None:
            notes = "under each: entropy (nats)" + (
                f" · mean attention distance ({s.distance_unit})" if s.distance is not None else "")
            self._title_notes = (r.part, notes)
        else:
            # while a keystroke's statistics are computed, keep the legend of the last ones: a caption
            # that lost and regained its line re-laid out (and redrew) the whole grid twice
            last_part, notes = self._title_notes
            notes = notes if last_part == r.part else ""
        set_title(self.title_item, f"All heads · {r.part_name}", self.style)
        self._set_caption(" — ".join(t for t in (self.page_note(), notes) if t))

    def _set_caption(self, text: str) -> None:
        set_title(self.caption, text, self.style, 1.0)  # the base size: the audit holds every label to 12 px
        self.caption.setVisible(bool(text))

    def _after_relayout(self) -> None:
        # an export is laid out within exporting(): its caption says where the heads off the slide are,
        # and the window's caption comes back when it is laid out for the screen again
        if self.res is None or self.thumbs is None:
            return
        before = self.caption.text
        self._set_title()
        if self.caption.text != before:  # its height changed after the layout was made: make it again
            self.figure.layout.invalidate()
            self.figure.layout.activate()

    # -- interaction ---------------------------------------------------------------------------
    def head_info(self, layer: int, head: int) -> str:
        """Status text for one head: its statistics and largest weight."""
        if self._long_active():
            return self._long_info(layer, head) or (
                f"Layer {layer} · head {head}: largest weight {self.thumbs.max_weight[layer, head]:.4f}, "
                f"entropy {self._long.entropy[layer, head]:.4f} nats")
        text = f"Layer {layer} · head {head}: largest weight {self.thumbs.max_weight[layer, head]:.4f}"
        if self.stats is not None:
            text += f", entropy {self.stats.entropy[layer, head]:.4f} nats"
            if self.stats.distance is not None:
                text += f", mean distance {self.stats.distance[layer, head]:.3f} {self.stats.distance_unit}"
        return text

    def _hover(self, index) -> None:
        text = "" if index is None or self.thumbs is None else self.head_info(*index)
        self.set_hover_text(text)
        if index is not None:
            # the tile's own tooltip, else Qt shows the dock's (the view's name) over the grid
            self.grid.setToolTip(text)

    def _select(self, layer: int, head: int) -> None:
        if self.selection is not None:
            self.selection.update(layer=layer, head=head)

    def show_table(self, on: bool) -> None:
        """Switch between thumbnails and the sortable table."""
        if on:
            self._fill_table()
        self.table.setVisible(on)
        self.canvas.setVisible(not on)
        if self.table_button.isChecked() != on:
            self.table_button.setChecked(on)

    def _fill_table(self) -> None:
        if self._long_active():
            self.table.fill(*self._long_table())
            return
        self.table.fill(None if self.thumbs is None else self.thumbs.max_weight, self.stats)

    # -- style ---------------------------------------------------------------------------------
    def _style_changed(self) -> None:
        self.scale_box.follow_style(self.style.scale)
        self.fit_pitch()  # presented or not: the rows' pitch and the notes' size go with the style
        self._apply_style()
        if self.trace is not None:
            self._rebuild()

    def _apply_style(self) -> None:
        st = self.style
        for ax in (self.left, self.top):
            ax.set_style(st)
        self.bar.set_style(st)
        w = frame_pen_px(st)
        for m, colour, width in zip(self.marks, ("#000000", st.highlight), (w, w - 2)):
            pen = QPen(QColor(colour), width)
            pen.setCosmetic(True)
            m.setPen(pen)
        self._style_notes()
