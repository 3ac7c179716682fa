"""A T×T map's cells (queries × keys, ``min_side``): square, as a map of tokens × tokens is read, with numbers
while they fit and every key named. A mixin of :class:`~attnviz.gui.walkthrough.matrix_grid.MatrixGrid` (its
``_numbers``, ``_zoom``, fonts, labels and ``min_side``)."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetricsF

__all__ = ["SquareCells", "NEAR_SQUARE", "MIN_ZOOM"]

NEAR_SQUARE = 1.25  # widest a T×T map's cell may be for its height (numbers kept, or every key named)
MIN_ZOOM = 0.7  # smallest reduction before numbers give way to a heatmap (every grid's, see MatrixGrid)


class SquareCells:
    """``_square_cells``: the cell size of a T×T map, from the cell its numbers or heatmap would have."""

    def _square_cells(self, cw: float, ch: float, avail_w: float, avail_h: float, rows: int,
                      cols: int) -> tuple[float, float]:
        """At least ``min_side`` each way, room permitting, then square (with numbers too: P was drawn 297 × 205
        beside V and Z); the numbers shrink with a narrower cell down to the smallest zoom, keep a cell at most
        NEAR_SQUARE wide for its height, else give way to a heatmap."""
        cw = max(cw, min(avail_w, self.min_side) / cols)
        ch = max(ch, min(avail_h, self.min_side) / rows)
        side = min(max(cw, ch), avail_w / cols, avail_h / rows)
        if self._numbers and side < cw:
            if self._zoom * side / cw >= MIN_ZOOM:
                self._zoom *= side / cw
                return side, side
            if cw > NEAR_SQUARE * ch:
                self._numbers, self._zoom = False, 1.0
                return self._square_heatmap(cw, ch)
            return cw, ch
        if self._numbers:
            return side, side
        return self._square_heatmap(cw, ch)

    def _named_column_px(self, least: bool = False) -> float:
        """Width a column needs for its label upright at the smallest legible size (col_floor_pt; ``least``: the
        least room a page that must fit gives it, see MatrixGridLabels._page_least)."""
        small = QFont(self._fonts()[2])
        small.setPointSizeF(self.col_floor_pt(least))
        return QFontMetricsF(small).height() * 0.9 + 0.25

    def _square_heatmap(self, cw: float, ch: float) -> tuple[float, float]:
        """A T×T heatmap's cells: square, or up to NEAR_SQUARE wider where that names every one of up to 24 keys
        (matrix-z of a 24-token input on a slide named every 2nd key in 7.3-px square columns)."""
        side = min(cw, ch)
        if self.col_labels and len(self.col_labels) <= 24 and self._show_col_labels():
            return max(side, min(cw, NEAR_SQUARE * side, self._named_column_px())), side
        return side, side
