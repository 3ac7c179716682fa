"""Many heads, one output, drawn to scale: concat(Z_0 … Z_{H-1}) × W_O (+ b_O) = A.

The subject of the figure is width arithmetic (H heads of d_head columns make d_model), so one unit of
width is the same everywhere: each Z_h is d_head units wide, W_O is H·d_head units tall and d_model units
wide (its true aspect), b_O and A are d_model units wide. The Z_h touch, because they are concatenated;
each keeps a frame of its head's colour. Token names stand in a column of their own left of Z_0, so no
matrix gives its width to labels. Above each Z_h its attention pattern P_h (queries × keys, square cells):
the pattern that made the head's Z, equally sized for every head. At 9 to 32 heads the figure stays
whole: the unit shrinks (down to a fraction of a pixel; cells become a heatmap) rather than cutting heads.

One widget paints all of it with QPainter (images for the cells, text for labels), so the same drawing
reaches the screen, F5, lessons and exports. ``rects`` holds where each matrix is drawn (tests read it); its
words (titles, legends, labels) are drawn by concat_figure_text, whose ``text_boxes`` say where.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnviz.gui.style import ViewStyle, head_colour
from attnviz.gui.walkthrough.colour_scales import colours
from attnviz.gui.walkthrough.concat_figure_text import ConcatText
from attnviz.gui.walkthrough.matrix_grid import visible_label
from attnviz.gui.walkthrough.matrix_grid_paint import short_label
from attnviz.gui.widgets.legible import floor_pt

__all__ = ["ConcatFigure"]

MAX_UNIT = 14.0  # px per column at most (a 2-head, d_head 8 toy must not fill the slide with 4 cells)
LEGEND_LINE = 1.4  # lines under the rows for legends that fit on one line
# the share of the label font's size that rows_at_line asks room for: 96 %, so a slide's P (12 tokens, 13 rows
# with [CLS]) keeps its 300 px above it (at 100 % it was drawn 298 px)
FULL_ROWS = 0.96
MARGIN = 4.0  # px around the figure (6 left P under P V = Z 1 px short of its 300 px on a slide)
QUERY_ORANGE = "#EE7733"  # the selected query's row, as in every grid


class ConcatFigure(ConcatText, QWidget):
    """concat(Z) × W_O (+ b_O) = A with a common column unit; ``set_data`` gives it the matrices."""

    def __init__(self, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.style = style or ViewStyle()
        self.Z = np.zeros((0, 0, 0))
        self.P = None
        self.W_O = self.b_O = self.A = None
        self.q_tok: list[str] = []
        self.selected = 0
        self.query: int | None = None
        self.ablated: set[int] = set()
        self.rects: dict[str, QRectF] = {}
        self.unit = self.row_px = 0.0
        # asks for rows a full label line tall (its sizeHint too), not the floor: under P V = Z on a slide, where a
        # share of the height named them in 12.7 px type beside P V = Z's 23.8 (``rows_at_line``)
        self.rows_at_line = False
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_data(self, Z, W_O, A, q_tok, P=None, b_O=None, selected: int = 0, query: int | None = None,
                 ablated=()) -> None:
        """Z (H, T, d_head) as concatenated (an ablated head's Z is zeros), W_O (H·d_head, d_model), A (T,
        d_model); P (H, T, T_k) each head's attention weights; b_O (d_model,) when the model has one."""
        self.Z = np.asarray(Z, dtype=np.float64)
        self.W_O, self.A = np.asarray(W_O, dtype=np.float64), np.asarray(A, dtype=np.float64)
        self.P = None if P is None else np.asarray(P, dtype=np.float64)
        self.b_O = None if b_O is None else np.asarray(b_O, dtype=np.float64).reshape(1, -1)
        self.q_tok = [short_label(visible_label(t)) for t in q_tok]
        self.selected, self.query, self.ablated = selected, query, set(ablated)
        self.updateGeometry()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        if self.rows_at_line:  # what full-size token names need, no more: the rest is P V = Z's
            return QSize(900, self._height(full=True))
        return QSize(900, 420)  # asks modestly: the row takes the spare height (stretch), notes keep theirs

    def minimumSizeHint(self) -> QSize:
        """Titles, head numbers, legend and (up to 24) rows each named at the legible floor, in this style's type:
        presented below P V = Z, a fixed 260 px left the rows ~5 px and the titles over each other."""
        return QSize(400, self._height(full=False))

    def _height(self, full: bool) -> int:
        """What layout_rects needs for (up to 24) token rows named at the legible floor or, ``full``, at FULL_ROWS
        of the label font's size: the rows, margins, title, head numbers and legend (b_O sits under W_O, beside the
        rows)."""
        title_font, label_font, _ = self._fonts()
        ft, fl = QFontMetricsF(title_font), QFontMetricsF(label_font)
        T = self.Z.shape[1] if self.Z.ndim == 3 else 0
        pitch = QFontMetricsF(self._label_font(floor_pt(self.style, self))).height() * 0.8
        if full:
            pitch = max(pitch, fl.height() * 0.8 * FULL_ROWS)  # row_label_font's pitch for that size
        legend = LEGEND_LINE if self.rows_at_line else 2.5  # a slide's width keeps legends on one line
        fixed = 2 * MARGIN + ft.height() + fl.height() * (1.2 + 1.1 + legend)
        return math.ceil(max(160.0, fixed + min(T, 24) * pitch))

    # -- geometry ---------------------------------------------------------------------------------
    def _fonts(self):
        st = self.style
        return st.font(1.25, bold=True), st.font(1.1), st.font(2.0, bold=True)

    def _label_font(self, pt: float | None = None):
        font = self.style.font(1.1)
        if pt is not None:
            font.setPointSizeF(pt)
        return font

    def row_label_font(self):
        """The token names' font: the label font, shrunk to the row pitch (never under the legible floor)."""
        font = self._label_font()
        floor = floor_pt(self.style, self)
        for _ in range(6):
            need = QFontMetricsF(font).height() * 0.8
            if need <= self.row_px or font.pointSizeF() <= floor:
                break
            font.setPointSizeF(max(floor, font.pointSizeF() * self.row_px / need * 0.98))
        return font

    def row_label_stride(self) -> int:
        """1 when every token row is named at the current size, k when every k-th is."""
        return max(1, math.ceil(QFontMetricsF(self.row_label_font()).height() * 0.8 / max(self.row_px, 1e-6)))

    def _ops(self) -> list[str]:
        return ["×", "="]

    def layout_rects(self, width: float, height: float) -> dict[str, QRectF]:
        """Where each part is drawn in a ``width`` × ``height`` widget (the column unit is common)."""
        title_font, label_font, op_font = self._fonts()
        ft, fl, fo = QFontMetricsF(title_font), QFontMetricsF(label_font), QFontMetricsF(op_font)
        H, T, dh = self.Z.shape
        D = self.A.shape[1]
        m = MARGIN
        label_w = max((fl.horizontalAdvance(s) for s in self.q_tok + ["P"]), default=0.0) + 10
        op_w = [fo.horizontalAdvance(s) + 28 for s in self._ops()]
        # title, then the shape under it in grey: a narrow block never runs its title into the next
        title_h, legend_h, line = ft.height() + fl.height() * 1.2, fl.height() * 2.5, fl.height()
        index_h = line * 1.1  # the head numbers between P_h and Z_h
        bias_h = max(line, 1.0) if self.b_O is not None else 0.0
        bias_gap = line * 1.6 if self.b_O is not None else 0.0  # "+ b_O" between W_O and its strip
        # widths: labels | H·dh units | × | D units (W_O) | = | D units (A)
        u_w = (width - 2 * m - label_w - sum(op_w)) / max(H * dh + 2 * D, 1)
        # heights: W_O is H·dh units tall under its title, with the bias strip and a legend below
        u_h = (height - 2 * m - title_h - bias_gap - bias_h - legend_h) / max(H * dh, 1)
        u = max(0.05, min(u_w, u_h, MAX_UNIT))
        # each block's column at least as wide as the text it carries (title, shape, legend; the operator's column
        # is the title's too): a height-bound figure (the overview presented) drew "concat(Z)" over "W_O" and
        # "+ b_O 1 × 64" over "="; the blocks keep their one unit, the room beside them is left blank. Whole titles
        # and one-line legends when they cost no unit (a 1920 slide ran "concat(Z₀ … Z₈)" into "W_O" and wrapped
        # "Z: ±0.29, every / head" with half its width empty), else the short title and legends on two lines
        cols = (H * dh, D, D)
        tight = self._text_widths(ft, fl, H, T, dh, D, whole=False)
        whole = self._text_widths(ft, fl, H, T, dh, D, whole=True)
        u_tight = self._fit_unit(u, cols, tight, label_w, op_w, width - 2 * m)
        u_whole = self._fit_unit(u, cols, whole, label_w, op_w, width - 2 * m)
        need = whole if u_whole >= u_tight * 0.98 else tight
        u = u_whole if need is whole else u_tight
        slot_z, slot_w, slot_a = self._slots(u, cols, need, op_w)
        zw = dh * u
        # P_h above Z_h: square cells, as wide as Z_h (never taller than a third of the room)
        Tk = self.P.shape[2] if self.P is not None else 0
        if need is whole:  # legends on one line: the rows get the second line's room (W_O kept its unit above)
            legend_h = fl.height() * LEGEND_LINE
        room = height - 2 * m - title_h - index_h - legend_h
        p_cell = min(zw / Tk, room / 3 / max(T, 1)) if Tk else 0.0
        if T <= 24 and Tk:  # up to 24 tokens every row is named: the patterns give up height first, for
            # rows a full label line tall; with no readable pattern left beside such rows, the rows take it all (a
            # lesson page at 1280×720 drew 60 px patterns over rows named at the 12 px floor, the labels' size 21 px)
            full = max(0.0, min(p_cell, (room - T * line * 0.85) / max(T, 1)))
            if full * T < 2 * line:  # no readable pattern beside full-line rows: the rows shrink toward the legible
                # floor (12 px) for a pattern 3 lines tall — the lesson's claim is that the heads look differently,
                # and its live page dropped both patterns at 1280×720 and 1920×1080 (issue 36)
                floor_row = QFontMetricsF(self._label_font(floor_pt(self.style, self))).height() * 0.8
                full = max(0.0, min(p_cell, (room - T * floor_row) / max(T, 1), 3 * line / max(T, 1)))
            p_cell = full if full * T >= 2 * line else 0.0
        if p_cell * T < 2 * line:  # too small to read as a pattern: left out rather than drawn as a smear
            p_cell = 0.0
        p_h, p_w = p_cell * T, p_cell * Tk
        row = max(0.5, min((room - p_h) / max(T, 1), 2.2 * line))
        self.unit, self.row_px = u, row
        rects: dict[str, QRectF] = {}
        # a height-bound figure in a wide page stands in its middle, not along its left edge
        spare = width - 2 * m - label_w - sum(op_w) - slot_z - slot_w - slot_a
        left = m + max(0.0, spare / 2)
        x0, y_top = left + label_w, m + title_h
        y_z = y_top + p_h + index_h
        rects["labels"] = QRectF(left, y_z, label_w - 10, T * row)
        for h in range(H):
            x = x0 + h * zw
            if p_h:
                rects[f"P{h}"] = QRectF(x + (zw - p_w) / 2, y_top, p_w, p_h)
            rects[f"Z{h}"] = QRectF(x, y_z, zw, T * row)
        x = x0 + slot_z
        rects["op0"] = QRectF(x, y_z, op_w[0], T * row)
        x += op_w[0]
        rects["W_O"] = QRectF(x, y_top, D * u, H * dh * u)
        if self.b_O is not None:
            rects["b_O"] = QRectF(x, y_top + H * dh * u + bias_gap, D * u, bias_h)
        x += slot_w
        rects["op1"] = QRectF(x, y_z, op_w[1], T * row)
        rects["A"] = QRectF(x + op_w[1], y_z, D * u, T * row)
        return rects

    @staticmethod
    def _slots(unit: float, cols, need, op_w) -> list[float]:
        """Each block's width with its text: titles and legends, above and below the rows, may run over the
        operator's column; "+ b_O 1 × D", level with the rows, may not (it ran over "=")."""
        widths, bias = need
        out = [max(c * unit, n - o) for c, n, o in zip(cols, widths, list(op_w) + [0.0])]
        out[1] = max(out[1], bias)
        return out

    def _fit_unit(self, u: float, cols, need, label_w: float, op_w, room: float) -> float:
        """``u``, or the largest unit under it whose blocks and texts fit ``room`` (width-bound)."""
        def fits(unit: float) -> bool:
            return label_w + sum(op_w) + sum(self._slots(unit, cols, need, op_w)) <= room

        if fits(u):
            return u
        lo, hi = 0.05, u
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return max(0.05, lo)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # unit, row pitch and rects follow the size now, not at the next paint: scrolled out of sight below
        # P V = Z the figure is not painted, and its rows were read at a stale pitch
        if self.Z.size and self.A is not None:
            self.rects = self.layout_rects(self.width(), self.height())

    # -- painting -----------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.TextAntialiasing)
        self.paint(p)
        p.end()

    def _image(self, values: np.ndarray, kind: str, vmax: float) -> QImage:
        rgb = np.ascontiguousarray(colours(values, kind, vmax, self.style)[..., :3], dtype=np.uint8)
        img = QImage(rgb.data, rgb.shape[1], rgb.shape[0], rgb.shape[1] * 3, QImage.Format.Format_RGB888)
        return img.copy()  # own the pixels: rgb is freed on return

    def _vmax(self, a: np.ndarray) -> float:
        finite = np.abs(a[np.isfinite(a)])
        return float(finite.max()) if finite.size and finite.max() > 0 else 1.0

    def paint(self, p: QPainter) -> None:
        if not self.Z.size or self.A is None:
            return
        self.rects = r = self.layout_rects(self.width(), self.height())
        H, T, dh = self.Z.shape
        D = self.A.shape[1]
        z_max = self._vmax(self.Z)  # one scale for every head's Z: their magnitudes compare
        for h in range(H):
            p.drawImage(r[f"Z{h}"], self._image(self.Z[h], "signed", z_max))
            if f"P{h}" in r:
                p.drawImage(r[f"P{h}"], self._image(self.P[h], "prob", 1.0))
        p.drawImage(r["W_O"], self._image(self.W_O, "signed", self._vmax(self.W_O)))
        if self.b_O is not None:
            p.drawImage(r["b_O"], self._image(self.b_O, "signed", self._vmax(self.b_O)))
        p.drawImage(r["A"], self._image(self.A, "signed", self._vmax(self.A)))
        self._paint_frames(p, r, H)
        self._paint_query(p, r, H, T)
        self._paint_text(p, r, H, T, dh, D)

    def frame_widths(self) -> tuple[float, float]:
        """Pen widths of a head's frame and of the selected head's: the style's, but never wider than the
        cells they run over allow (a pen covers half its width of the Z's edge columns: at 32 heads the
        presented 3 and 7.5 px outlines hid most of every 16-px Z). At most 0.4 and 1 cell, and 6 % and 15 %
        of a Z's width; at least 0.5 and 1 px so they still show."""
        lw, u = self.style.line_width, self.unit
        zw = self.Z.shape[2] * u if self.Z.ndim == 3 else 0.0
        thin = max(0.5, min(1.2 * lw, 0.4 * u, 0.06 * zw))
        thick = max(1.0, min(3 * lw, u, 0.15 * zw))
        return thin, thick

    def _paint_frames(self, p: QPainter, r, H: int) -> None:
        lw = self.style.line_width
        thin, thick = self.frame_widths()
        for h in range(H):
            sel = h == self.selected
            p.setPen(QPen(QColor(head_colour(h)), thick if sel else thin))
            p.setBrush(Qt.NoBrush)
            p.drawRect(r[f"Z{h}"])
            if f"P{h}" in r and sel:
                p.drawRect(r[f"P{h}"].adjusted(-1, -1, 1, 1))
            if h in self.ablated:  # switched off by the what-if lab: its Z enters the concatenation as zeros
                p.setPen(QPen(QColor(self.style.foreground), lw))
                p.drawLine(r[f"Z{h}"].topLeft(), r[f"Z{h}"].bottomRight())
        p.setPen(QPen(QColor(self.style.foreground), 0.8))
        for name in ("W_O", "b_O", "A"):
            if name in r:
                p.drawRect(r[name])

    def _paint_query(self, p: QPainter, r, H: int, T: int) -> None:
        q = self.query
        if q is None or not 0 <= q < T:
            return
        ch = self.row_px
        p.setPen(QPen(QColor(QUERY_ORANGE), max(1.0, min(2.5 * self.style.line_width, ch / 3))))
        p.setBrush(Qt.NoBrush)
        z0, zl = r["Z0"], r[f"Z{H - 1}"]
        p.drawRect(QRectF(z0.left(), z0.top() + q * ch, zl.right() - z0.left(), ch))
        a = r["A"]
        p.drawRect(QRectF(a.left(), a.top() + q * ch, a.width(), ch))
