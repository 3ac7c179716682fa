"""A matrix drawn as coloured cells: numbers in the cells when they fit, a heatmap when they do not.

Colours are honest: signed values (weights, q, k, scores) use a diverging blue–white–red map centred on
0 with symmetric limits, probabilities the view's colour map on the fixed range 0…1, and masked cells
(−∞) a hatched grey labelled "−∞", never a colour that could be read as a number. A legend under the
grid states the range. Hovering a cell shows its exact value (tooltip and ``hovered`` signal).
Everything is drawn with QPainter (:mod:`~attnviz.gui.walkthrough.matrix_grid_paint`), so SVG/PDF exports
keep the numbers as text; this module holds the data, the geometry and the interaction.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.matrix_grid_labels import MatrixGridLabels
from attnviz.gui.walkthrough.matrix_grid_square import MIN_ZOOM, NEAR_SQUARE, SquareCells  # noqa: F401 (re-exported)
from attnviz.gui.walkthrough.matrix_grid_paint import LABEL_CHARS, MatrixGridPainting, short_label
from attnviz.gui.walkthrough.number_format import exact_number, format_number, widest_candidates
from attnviz.gui.widgets.legible import floor_pt
from attnviz.text.token_display import display_token

__all__ = ["MatrixGrid", "KINDS", "visible_label"]

KINDS = ("signed", "prob")
MAX_ZOOM = 1.8  # largest enlargement of cells and numbers when a grid has room
_ASPECT = 2.5  # most a heatmap cell may be stretched, either way

MIN_ZOOM_VECTOR = 0.55  # a column of scores keeps its numbers longer: it is what the step is about


def visible_label(token) -> str:
    """A token as a label, as every other view writes it (:func:`attnviz.text.token_display.display_token`:
    byte-level BPE's "Ġcat" as "cat", a space as "␣"); a token that reads as nothing is quoted, so no row is
    left unnamed."""
    text = display_token(token)
    return text if text.strip() else repr(str(token))


class MatrixGrid(SquareCells, MatrixGridLabels, MatrixGridPainting, QWidget):
    """One named matrix. ``set_data`` gives it values and labels; it sizes and draws itself."""

    hovered = Signal(str)
    clicked = Signal(int, int)

    def __init__(self, name: str, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.name = name
        self.style = style or ViewStyle()
        self.values = np.zeros((0, 0))
        self.masked = np.zeros((0, 0), bool)
        self.title = name
        self.subtitle = ""
        self.row_labels: list[str] = []
        self.col_labels: list[str] = []
        self.kind = "signed"
        self.vmax = 1.0
        self.highlight_rows: set[int] = set()
        self.frame_colour: str | None = None
        self.digits = 2
        self.min_side = 0.0  # the cell area's shorter side is at least this (T×T maps on a slide)
        self.row_group: list = []  # grids beside this one whose rows are the same tokens (set by the board)
        self.modest = False  # sizeHint asks only for the minimum height (a supporting matrix beside T×T maps)
        # with ``modest``: a row per line of the smallest legible label (presenting: the T×T maps below are
        # the scene's message and take the height; a lesson's scene 4 drew them 2.3 : 1 with 12 px labels)
        self.compact = False
        # row pitch, in lines of the row label font, a grid asks room for and names its rows at: 0.8 lets
        # neighbours' descenders meet cap heights (dense maps); 1.0 (the six steps' K and V) keeps a gap: at
        # 0.8 shapes' 17 keys ran together at 1280×720 (issue 36)
        self.row_pitch = 0.8
        self.hover_text = ""
        self._layout: tuple | None = None
        self._zoom = 1.0
        self._numbers = False
        self._memo: dict = {}
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)

    # -- data ----------------------------------------------------------------------------------
    def set_data(self, values, title: str | None = None, subtitle: str = "", row_labels=None, col_labels=None,
                 kind: str = "signed", vmax: float | None = None, highlight_rows=(), frame_colour: str | None = None,
                 min_side: float = 0.0, masked=None):
        """Show ``values`` (2-D; a 1-D vector is drawn as a row).

        kind : "signed" (diverging, symmetric about 0) or "prob" (colour map on 0…1).
        vmax : the colour limit; default the largest finite |value| (signed) or 1 (prob).
        min_side : the size in pixels the cell area asks for (width and height), so a T×T map stays
            readable on a slide; it takes that much whenever the layout gives the grid the room.
        masked : boolean cells the model masked (a probability of exactly 0 that is no weight at all):
            hatched like −∞ and left without a number, so a masked cell never reads as "0".
        """
        a = np.asarray(values, dtype=np.float64)
        self.values = a[None, :] if a.ndim == 1 else a
        m = np.zeros(self.values.shape, bool) if masked is None else np.asarray(masked, bool)
        self.masked = np.broadcast_to(m[None, :] if m.ndim == 1 else m, self.values.shape)
        self.title = self.name if title is None else title
        self.subtitle = subtitle or f"{self.values.shape[0]} × {self.values.shape[1]}"
        self.row_labels = [visible_label(x) for x in row_labels] if row_labels is not None else []
        self.col_labels = [visible_label(x) for x in col_labels] if col_labels is not None else []
        self.kind = kind
        finite = np.abs(self.values[np.isfinite(self.values)])
        auto = 1.0 if kind == "prob" else float(finite.max()) if finite.size else 1.0
        self.vmax = float(vmax) if vmax is not None else (auto or 1.0)  # all zeros: white cells, legend ±1
        self.highlight_rows = set(highlight_rows)
        self.frame_colour = frame_colour
        self.min_side = float(min_side)
        self._memo = {}
        self.updateGeometry()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self._memo = {}
        self.updateGeometry()
        self.update()

    def _memoized(self, name: str, compute):
        """Text measurements depend only on data and style: measure once per set_data/set_style."""
        if name not in self._memo:
            self._memo[name] = compute()
        return self._memo[name]

    def cell_text(self, r: int, c: int) -> str:
        """What the cell shows (rounded; nothing in a masked cell: its hatch says it)."""
        return "" if self.masked[r, c] else format_number(self.values[r, c], self.digits)

    def exact_text(self, r: int, c: int) -> str:
        """The exact value shown on hover."""
        return exact_number(self.values[r, c]) + (" (masked)" if self.masked[r, c] else "")

    # -- geometry --------------------------------------------------------------------------------
    def _fonts(self):
        """(numbers, title, labels) fonts of the current style, made once per style."""
        if getattr(self, "_font_cache", (None,))[0] is not self.style:
            st = self.style
            self._font_cache = (st, (st.font(1.15), st.font(1.25, bold=True), st.font(1.1)))
        return self._font_cache[1]

    def _label_width(self, labels: list[str], fm: QFontMetricsF, limit: int = LABEL_CHARS) -> float:
        return max((fm.horizontalAdvance(short_label(s, limit)) for s in labels), default=0.0)

    def _preferred_cell(self) -> tuple[float, float]:
        """Cell size at which every number fits."""
        def compute():
            fm = QFontMetricsF(self._fonts()[0])
            texts = {format_number(v, self.digits) for v in widest_candidates(self.values)} or {"0.00"}
            longest = sorted(texts, key=len)[-6:]  # width follows length closely: measure the longest few
            widest = max(fm.horizontalAdvance(t) for t in longest)
            return max(widest + 12, fm.height() * 1.8), fm.height() + 10

        return self._memoized("cell", compute)

    def sizeHint(self) -> QSize:
        if self.modest:  # a few pixels a row; spare room goes to the grids that matter
            full = self._full_size_hint()
            left, top, bottom = self._margins()
            rows = self.values.shape[0] if self.values.size else 1
            # up to 24 rows, a line of label text per row: every token stays named beside the large maps
            pitch = self.row_pitch
            line = QFontMetricsF(self._fonts()[2]).height() * pitch + 0.25 if rows <= 24 and self.row_labels else 5
            if self.row_labels and (12 < rows <= 24 or self.compact):
                # past 12 rows the labels shrink (row_label_font, never under the floor) rather than the
                # T×T maps below: 21 full lines took the height the maps are shown for
                small = QFont(self._fonts()[2])
                small.setPointSizeF(self.row_floor_pt())
                line = max(QFontMetricsF(small).height() * pitch + 0.25, 0 if self.compact else line * 12 / rows)
            low = max(self.minimumSizeHint().height(), math.ceil(top + min(rows, 40) * line + bottom))
            return QSize(full.width(), low if rows <= 24 else min(full.height(), low))
        return self._full_size_hint()

    def _full_size_hint(self) -> QSize:
        rows, cols = self.values.shape if self.values.size else (1, 1)
        cw, ch = self._preferred_cell()
        if rows * cols > 900 or cols > 24 or rows > 40:  # a heatmap: about 6 px per cell, capped
            cw = ch = max(2.0, min(12.0, 420.0 / max(rows, cols)))
        elif self.min_side:  # a T×T map asks for square cells (as _natural_cells draws them)
            cw = ch = max(cw, ch)
        left, top, bottom = self._margins()
        side = self.min_side
        width = max(left + max(cols * cw, side) + 8, left + self._legend_width(), self._title_width())
        return QSize(int(min(width, max(900, left + side + 8))), int(min(top + max(rows * ch, side) + bottom, 900)))

    def _title_parts(self) -> tuple[float, float]:
        """Widths of the title (with its gap) and of the subtitle ("64 × 16")."""
        _, title_font, label_font = self._fonts()
        return self._memoized("title", lambda: (QFontMetricsF(title_font).horizontalAdvance(f"{self.title}   "),
                                                QFontMetricsF(label_font).horizontalAdvance(self.subtitle) + 4))

    def _title_width(self) -> float:
        return sum(self._title_parts())

    def _subtitle_below(self) -> bool:
        """A narrow grid puts its subtitle under the title rather than cutting it off."""
        return bool(self.subtitle) and 0 < self.width() < self._title_width()

    def minimumSizeHint(self) -> QSize:
        left, top, bottom = self._margins()
        rows, cols = self.values.shape if self.values.size else (1, 1)
        fm = QFontMetricsF(self._fonts()[2])
        # title and subtitle ("W_Q", "64 × 16": the shape is part of the lesson) are never cut; a
        # narrow grid stacks them
        width = max(left + min(cols, 40) * 2 + 8, left + fm.horizontalAdvance("±" + self._legend_texts()[1]) + 20,
                    *self._title_parts())
        # a vector (x_i, q_i, a bias) keeps visible cells when a tall row next to it takes the height
        # a short list (top 5, a layer × head table) keeps a text line per row: its labels are the point
        # a strip (x_i 1×64, a bias 1×16) keeps a text line of height: at 2 px a row it was a hair line on a
        # slide with its row label taller than the strip
        cell_h = QFontMetricsF(self._fonts()[2]).height() if (rows <= 8 and cols <= 8) or rows == 1 else 2
        small = QFont(self._fonts()[2])
        small.setPointSizeF(self.row_floor_pt(least=True))
        line = QFontMetricsF(small).height()  # a line of the smallest legible label
        if self.row_labels and rows <= 24:
            # a row of tokens keeps a line of the smallest legible label per row (a lesson's 1280×720
            # scene drew its T×T maps 30 px tall, every sixth token named)
            cell_h = max(cell_h, line * self.row_pitch + 0.25)
        if self._show_col_labels() and cols <= 24:
            # a line of the smallest legible label per column, so every token is named upright (a 1280×720
            # window named every other key of Q Kᵀ) or level in a cell that shows more than a sliver of it;
            # the scroll area gives the room
            col_w = self._named_column_px(least=True)
            width = max(width, self.measure_margins()[0] + cols * col_w + 8)
            if self.min_side:  # a T×T map's cells are square: its rows as tall as its columns are wide
                cell_h = max(cell_h, col_w)
        if self.subtitle and width < self._title_width():
            top = self.measure_margins()[1] + QFontMetricsF(self._fonts()[2]).height()  # subtitle stacked
        if self.row_labels and rows <= 24:
            # the row's grids of the same tokens share the top and bottom of their cells (_cells): a taller title
            # beside this one (A's stacked subtitle beside Z_0) took the height its named rows asked for
            peers = [g for g in self.row_group if g is not self and g.values.shape[0] == rows and g.values.size]
            top = max([top] + [g._margins()[1] for g in peers])
            bottom = max([bottom] + [g._margins()[2] for g in peers])
        # min_side is asked for in sizeHint only: a small window shrinks the map rather than scrolling
        return QSize(math.ceil(width), math.ceil(top + min(rows, 40) * cell_h + bottom))

    def _margins(self, upright: QFont | None = None) -> tuple[float, float, float]:
        """Room for the labels, title and legend around the cells; upright column labels take the room they
        need in the font they are drawn in (``upright``: in that font instead)."""
        left, top, bottom = self._memoized("margins", self.measure_margins)
        if self._subtitle_below():
            top += QFontMetricsF(self._fonts()[2]).height()
        if self.values.size and self._show_col_labels() and self._rotated_cols():
            top -= self._upright_room_saved(upright if upright is not None else self.col_label_font())
        return left, top, bottom

    def measure_margins(self) -> tuple[float, float, float]:
        """(left, top, bottom) px around the cells: row labels, title and column labels (public: the What-if
        slide sizes its tables from it)."""
        num_font, title_font, label_font = self._fonts()
        fl = QFontMetricsF(label_font)
        left = self._label_width(self.row_labels, QFontMetricsF(self.row_room_font())) + 8 if self.row_labels else 2
        top = QFontMetricsF(title_font).height() * 1.2
        if self._show_col_labels():
            # token names stand upright above the columns when they are wider than a cell could be
            # upright labels end 4 px above the cells (matrix_grid_paint)
            top += self._label_width(self.col_labels, fl) + 4 if self._rotated_cols() else fl.height() * 1.1
        bottom = fl.height() * 1.4  # the one-line legend
        return left, top, bottom

    def _show_col_labels(self) -> bool:
        return bool(self.col_labels) and len(self.col_labels) <= 512  # thinned to what fits

    def _rotated_cols(self) -> bool:
        """Column labels written bottom-to-top: when one is wider than a preferred cell, or there are many."""
        def compute():
            fm = QFontMetricsF(self._fonts()[2])
            # the numbers may shrink to MIN_ZOOM of the preferred cell: a label must fit that too; a T×T map's
            # cells may be as narrow as its asked-for side allows (a heatmap): P of translate, whose long
            # probabilities asked for wide cells, wrote its keys level and elided ("… … a … …") beside upright ones
            cell = MIN_ZOOM * self._preferred_cell()[0]
            if self.min_side and self.col_labels:
                cell = min(cell, self.min_side / len(self.col_labels))
            return len(self.col_labels) > 24 or self._label_width(self.col_labels, fm) + 4 > cell

        return self._memoized("rotated", compute)

    def needed_cell(self) -> tuple[float, float]:
        """The smallest cell that still holds its number legibly."""
        pcw, _ = self._preferred_cell()
        fm = QFontMetricsF(self._fonts()[0])
        return pcw - 8, fm.height() + 2

    @property
    def numbers_shown(self) -> bool:
        """Whether the cells are large enough (at the current size) to carry their numbers."""
        return bool(self.values.size) and self._cells() is not None and self._numbers

    def _cells(self) -> tuple[QRectF, float, float]:
        """The cell area and the cell width/height for the current widget size.

        Grids of one figure row with the same tokens as rows (``row_group``) share the cell height and
        the top of their cells, so row "animal" of w, V and w·V lines up across the slide.
        """
        area, cw, ch = self._natural_cells()
        group = [g for g in self.row_group if g is not self and g.values.shape[0] == self.values.shape[0]
                 and g.height() == self.height() and g.values.size]
        if not group or not self.values.size:
            return area, cw, ch
        rows = self.values.shape[0]
        # a wide heatmap (X: T × d_model) keeps its columns narrow but not its rows: the group's height
        # is what each member's room allows, not what its cell aspect would
        # a T×T map of the row (min_side) sets the height: the matrices beside it line up with its rows
        members = [self] + group
        anchors = [g for g in members if g.min_side] or members
        shared = min(g._natural_cells(aspect=False)[2] for g in anchors)
        if anchors is not members:
            left, top, bottom = self._margins()
            shared = min(shared, max(self.height() - top - bottom, 1) / rows)  # never past its own room
        if self._numbers and shared < ch:
            self._zoom *= shared / ch  # the numbers shrink with their cells
        tops = [self._margins()[1]] + [g._margins()[1] for g in group]
        bottoms = [self._margins()[2]] + [g._margins()[2] for g in group]
        top, bottom = max(tops), max(bottoms)
        y = top + max(0.0, (self.height() - top - bottom - rows * shared) / 2)
        return QRectF(area.left(), y, area.width(), shared * rows), cw, shared

    def _natural_cells(self, aspect: bool = True, upright: QFont | None = None) -> tuple[QRectF, float, float]:
        """The cells this grid would have alone.

        Numbers at their normal size when they fit (enlarged up to MAX_ZOOM when there is room), smaller
        down to MIN_ZOOM, else a heatmap (square cells; a one- or two-column vector keeps wide cells).
        ``upright``: with room for upright column labels in this font (:meth:`_margins`).
        """
        left, top, bottom = self._margins(upright)
        rows, cols = self.values.shape
        avail_w, avail_h = max(self.width() - left - 8, 1), max(self.height() - top - bottom, 1)
        pcw, pch = self._preferred_cell()
        need_w, need_h = self.needed_cell()
        padded = min(avail_w / (cols * pcw), avail_h / (rows * pch))
        tight = min(avail_w / (cols * need_w), avail_h / (rows * need_h))
        self._numbers = True
        if padded >= 1:  # room to spare: larger cells and numbers, for the back row of the lecture hall
            self._zoom = min(padded, MAX_ZOOM)
            cw, ch = pcw * self._zoom, pch * self._zoom
        elif tight >= 1:
            self._zoom = 1.0
            cw, ch = min(pcw, avail_w / cols), min(pch, avail_h / rows)
        elif tight >= (MIN_ZOOM_VECTOR if cols <= 2 else MIN_ZOOM):  # smaller type rather than no numbers
            self._zoom = tight
            # a narrow grid's numbers shrink with its width, its rows need not: they keep the height they
            # have (a top-2 table 104 px wide drew 10.8 px rows, its two labels named every other one)
            cw, ch = need_w * tight, max(need_h * tight, min(pch, avail_h / rows))
        else:  # a heatmap (exact values on hover): cells may stretch up to 2.5:1 to use the room
            self._numbers, self._zoom = False, 1.0
            cw, ch = min(avail_w / cols, pcw), min(avail_h / rows, 40.0)
            if cols > 2 and aspect:
                # a strip (one row: x_i, a bias) keeps a text line of height, not a hair line of narrow cells
                strip = QFontMetricsF(self._fonts()[2]).height() if rows == 1 else 0.0
                cw, ch = min(cw, ch * _ASPECT), min(ch, max(cw * _ASPECT, strip))
        if self.min_side:  # a T×T map on a slide: at least min_side each way, room permitting
            cw, ch = self._square_cells(cw, ch, avail_w, avail_h, rows, cols)
        # centred vertically, so operators ("=", "×") between grids line up with the cells
        y = top + max(0.0, (avail_h - rows * ch) / 2)
        return QRectF(left, y, cw * cols, ch * rows), cw, ch

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # the minimum follows the width (a stacked subtitle, upright labels' font) and the row's peers (their
        # tops): the layout caches it, so a change is told to it, for this grid and the peers that read it
        hint = self.minimumSizeHint()
        self.setToolTip(self.hover_text or self.row_names_note())
        if hint != getattr(self, "_told_min", None):
            self._told_min = hint
            for g in [self] + [g for g in self.row_group if g is not self]:
                g.updateGeometry()

    # -- interaction ---------------------------------------------------------------------------------
    def cell_at(self, pos: QPointF) -> tuple[int, int] | None:
        if not self.values.size:
            return None
        area, cw, ch = self._layout = self._cells()  # the current geometry, painted or not
        if not area.contains(pos):
            return None
        r, c = int((pos.y() - area.top()) // ch), int((pos.x() - area.left()) // cw)
        rows, cols = self.values.shape
        return (r, c) if 0 <= r < rows and 0 <= c < cols else None

    def describe_cell(self, r: int, c: int) -> str:
        row = self.row_labels[r] if r < len(self.row_labels) else str(r)
        col = self.col_labels[c] if c < len(self.col_labels) else str(c)
        return f"{self.title}[{row}, {col}] = {self.exact_text(r, c)}"

    def mouseMoveEvent(self, event) -> None:
        cell = self.cell_at(event.position())
        text = self.describe_cell(*cell) if cell else ""
        if text != self.hover_text:
            self.hover_text = text
            self.setToolTip(text or self.row_names_note())
            if text:
                QToolTip.showText(event.globalPosition().toPoint(), text, self)
            self.hovered.emit(text)

    def mousePressEvent(self, event) -> None:
        cell = self.cell_at(event.position())
        if cell is not None:
            self.clicked.emit(*cell)
