"""Which token labels a matrix grid writes, and in which font: every row and column named, in a font shrunk
to fit (never under the legible floor of :mod:`attnviz.gui.widgets.legible`), thinned only below that."""

from __future__ import annotations

import math

from PySide6.QtGui import QFont, QFontMetricsF

from attnviz.gui.widgets.legible import floor_pt

__all__ = ["MatrixGridLabels"]


class MatrixGridLabels:
    """Mixed into :class:`~attnviz.gui.walkthrough.matrix_grid.MatrixGrid` (uses its cells, fonts, labels)."""

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
        return self._fitted_font(self._cells()[2] if self.values.size else None, 0.8)

    def col_label_font(self) -> QFont:
        """Upright column labels: as :meth:`row_label_font`, fitted to the column width."""
        rotated = self.values.size and self._show_col_labels() and self._rotated_cols()
        return self._fitted_font(self._cells()[1] if rotated else None, 0.9)

    def _fitted_font(self, cell: float | None, share: float) -> QFont:
        """The label font, shrunk (down to the floor) until a line of it takes at most ``cell`` / ``share``."""
        font = QFont(self._fonts()[2])
        if cell is None:
            return font
        ch = cell / share * 0.8  # the loop below fits 0.8 × the line height to ch
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
        return max(1, math.ceil(QFontMetricsF(self.row_label_font()).height() * 0.8 / max(ch, 1e-6)))
