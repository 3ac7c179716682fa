"""Which token labels a matrix grid writes, and in which font: every row and column named, in a font shrunk
to fit (never under the legible floor of :mod:`attnviz.gui.widgets.legible`), thinned only below that."""

from __future__ import annotations

import math

from PySide6.QtGui import QFont, QFontMetricsF

from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, FULL_HD_LINES, floor_pt, is_exporting, label_floor_pt, on_one_page

__all__ = ["MatrixGridLabels", "PRESENTED_ROW_PT"]

# points of a presented supporting grid's row labels on a 1080-line screen (20 px, the size a lecture hall's back
# row reads presented figures at; in proportion on a smaller screen, never under the docked 12 px)
PRESENTED_ROW_PT = 15.0


class MatrixGridLabels:
    """Mixed into :class:`~attnviz.gui.walkthrough.matrix_grid.MatrixGrid` (uses its cells, fonts, labels)."""

    @property
    def row_pitch(self) -> float:
        """Row pitch in lines of the row-label font (see MatrixGrid). A wider pitch asks the page for more height,
        which a screen gives by scrolling; a slide is fixed, so an export keeps the dense 0.8 that names every row
        (induction's 21 keys at 1.0 were named every second row on a 1920×1080 slide)."""
        pitch = getattr(self, "_row_pitch", 0.8)
        return min(pitch, 0.8) if is_exporting() else pitch

    @row_pitch.setter
    def row_pitch(self, value: float) -> None:
        self._row_pitch = float(value)

    def col_label_stride(self) -> int:
        """1 when every column label is written at the current size, k when every k-th is (upright labels
        need a line of text per column)."""
        if not self.values.size or not self._show_col_labels():
            return 1
        if not self._rotated_cols():
            return 1  # level labels are elided to their cell, never dropped
        cw = self._cells()[1]
        return max(1, math.ceil(QFontMetricsF(self.col_label_font()).height() * 0.9 / max(cw, 1e-6)))

    def row_label_font(self) -> QFont:
        """The row labels' font: the label font, or a smaller one (never under the legible floor) when that
        names every row where the full size would name every other one (a lesson's title and caption take
        height from the T×T maps)."""
        # never under the size the grid asked its rows' room for (row_floor_pt): fitted to that room, the 0.98
        # steps of the fit landed a presented 20-px row label at 19.7
        floor = self.row_floor_pt()
        font = self._fitted_font(self._cells()[2] if self.values.size else None, self.row_pitch, floor)
        if font.pointSizeF() < floor:  # the label font itself under the floor (a 9-pt one under the ink floor)
            font.setPointSizeF(floor)
        return font

    def row_room_font(self) -> QFont:
        """The font the row labels' margin is measured in: the label font, or the floor where that is larger (on
        screen the ink floor exceeds a 9-pt label font)."""
        font = QFont(self._fonts()[2])
        font.setPointSizeF(max(font.pointSizeF(), self.row_floor_pt()))
        return font

    def row_floor_pt(self, least: bool = False) -> float:
        """Points of the smallest row label a grid asks room for: the legible floor; a supporting grid presented
        on screen (``compact``: the matrix form's X, Q, K, V beside its T×T maps) for up to 12 tokens
        PRESENTED_ROW_PT in proportion to the screen (20 px at 1080 lines, 13 at 720) and at least the docked
        12 px (the floor in proportion is 8 px at 720 lines, issue 36).
        More rows keep the floor: 24 rows at 12 px took half a 720-line screen and pushed the maps off it."""
        floor = floor_pt(self.style, self)
        if self.compact and self.row_labels and self.values.shape[0] <= 12 and not is_exporting():
            # the presented size in proportion to the screen (floor_pt's own ratio): the live lesson's X, Q, K, V
            # named 12 rows in 12 px (10-px glyphs) under T×T maps labelled in 28 px
            win = self.window()
            lines = win.height() if win is not None and win.height() > 0 else FULL_HD_LINES
            # in proportion as floor_pt scales the presenting floor (not the lesson's held 12 px: at 720 lines
            # 20 px rows took the room of the T×T maps)
            floor = max(floor, DOCKED_FLOOR_PT, PRESENTED_ROW_PT * min(1.0, lines / FULL_HD_LINES))
        if least and self._page_least():
            return floor
        if self.values.shape[0] > 1 and (not self.col_labels or self._tt_inked()):
            # a row label inks at least the floor's 12 px: at the 12-px type floor the 24 rows of a 30 × 9
            # model's matrix form and shapes' 17 keys inked 10 px at 1280×720, and exported or presented (F5, the
            # lesson) 9–10 px (issue 36). A T×T map's where _tt_inked says; a strip (x_i, q_i) is a label-font
            # line tall
            floor = max(floor, label_floor_pt(self._fonts()[2], self.style, self))
        return floor

    def _page_least(self) -> bool:
        """Whether the least room this grid asks (``least``: its minimumSizeHint) is at the type floor, not the ink
        floor: presented on a page that must fit (legible.ONE_PAGE, the live lesson). It names every k-th row or
        column at the ink floor when the page gives it less (issue 36: at 12 px of ink the lesson's matrix-form
        scene scrolled 22 px in a 1216×662 window); its size hint and its drawing keep the ink floor."""
        return self.style.font_scale > 1 and not is_exporting() and on_one_page(self)

    def col_floor_pt(self, least: bool = False) -> float:
        """Points of the smallest upright column label: the legible floor; a T×T map (``min_side``) of up to 24
        keys presented on screen at least the docked 12 px, as every column of the matrix form is named (at
        1280×720, F5 drew them 8–11 px, the floor in proportion); the figure wraps its maps to make the room."""
        floor = floor_pt(self.style, self)
        if self.min_side and 0 < len(self.col_labels) <= 24 and not is_exporting():
            floor = max(floor, DOCKED_FLOOR_PT)
        if self._tt_inked() and not (least and self._page_least()):  # in ink, as the rows (row_floor_pt)
            floor = max(floor, label_floor_pt(self._fonts()[2], self.style, self))
        return floor

    def _tt_inked(self) -> bool:
        """Whether a T×T map's labels hold the ink floor: exported and presented (F5), not docked. Its rows are as
        tall as its named columns are wide: 24 columns at 12 px of ink wrap the maps of a 1920×1080 dock onto two
        lines."""
        return is_exporting() or self.style.font_scale > 1

    def col_label_font(self) -> QFont:
        """Upright column labels: as :meth:`row_label_font`, fitted to the column width."""
        rotated = self.values.size and self._show_col_labels() and self._rotated_cols()
        return self._upright_font() if rotated else self._fitted_font(None, 0.9)

    def _upright_font(self) -> QFont:
        """The upright labels' font: the largest (label font down to the floor) that fits the columns the cells
        have once the room above them is this font's. Room measured at the full label font while the labels
        were drawn smaller left ~50 px of a 1280×720 lesson's T×T maps empty (X, Q, K, V got 8 px rows)."""
        floor = self.col_floor_pt()
        size = (self.width(), self.height(), floor)  # (an export may lay a board out at two floors at one size)
        memo = self._memo.get("upright")
        if memo is None or memo[0] != size:
            font = QFont(self._fonts()[2])

            def fits(pt: float) -> bool:
                font.setPointSizeF(pt)
                return self._fitted_font(self._natural_cells(upright=font)[1], 0.9, floor).pointSizeF() >= pt - 1e-6

            # smaller type leaves the cells more height, so wider square columns: the largest size that fits them
            hi, lo = font.pointSizeF(), font.pointSizeF()
            while lo > floor and not fits(lo):  # down in 10 % steps to one that fits (or the floor)
                hi, lo = lo, max(floor, lo * 0.9)
            for _ in range(5 if hi > lo else 0):  # then between it and the last that did not
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid)
            font.setPointSizeF(lo)
            memo = self._memo["upright"] = (size, font)
        return memo[1]

    def _upright_room_saved(self, font: QFont) -> float:
        """How much less room upright column labels take in ``font`` than in the label font."""
        full = self._memoized("upright_full", lambda: self._label_width(self.col_labels, QFontMetricsF(self._fonts()[2])))
        return max(0.0, full - self._label_width(self.col_labels, QFontMetricsF(font)))

    def _fitted_font(self, cell: float | None, share: float, floor: float | None = None) -> QFont:
        """The label font, shrunk (down to ``floor``, default the legible one) until a line of it takes at most
        ``cell`` / ``share``."""
        font = QFont(self._fonts()[2])
        if cell is None:
            return font
        ch = cell / share * 0.8  # the loop below fits 0.8 × the line height to ch
        if floor is None:
            floor = floor_pt(self.style, self)  # the smallest label a back row reads (widgets/legible.py)
        for _ in range(6):  # font heights step with the hinting: a few rounds settle it
            need = QFontMetricsF(font).height() * 0.8
            if need <= ch or font.pointSizeF() <= floor:
                break
            font.setPointSizeF(max(floor, font.pointSizeF() * ch / need * 0.98))
        return font

    def row_label_stride(self) -> int:
        """1 when every row label is written at the current size, k when every k-th is (the selected
        row's always is)."""
        if not self.values.size:
            return 1
        ch = self._cells()[2]
        return max(1, math.ceil(QFontMetricsF(self.row_label_font()).height() * self.row_pitch / max(ch, 1e-6) - 1e-9))

    def row_names_note(self) -> str:
        """Which rows are named when not all are (issue 36: say which rows are shown), "" when every one is."""
        every = self.row_label_stride() if self.row_labels else 1
        if every == 1:
            return ""
        nth = {2: "2nd", 3: "3rd"}.get(every, f"{every}th")
        return f"rows named: every {nth} (the first, then every {nth}) and the selected one; hover a row for its token"
