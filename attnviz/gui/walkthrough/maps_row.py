"""A row of equal T×T maps with operators between them that wraps onto two lines when the figure is narrow.

The matrix form's one-head part shows Q Kᵀ, scaled and P side by side. With every one of 24 columns named
upright at 12 px the three need ~1,400 px; a 1280×720 window's Walkthrough dock is ~990 px wide and scrolled
sideways (K and V of the row above cut until scrolled). Narrower than one line needs, the row puts its last map
on a second line under the one before it, its operator ("softmax →") in the operator column: every map keeps
the same column width (drawn to scale: equal widths for equal columns) and the figure never scrolls sideways.
The choice follows the row's own width, so the window, F5 and an export (laid out at the slide's size) each
get the arrangement that fits them.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QLayout, QSizePolicy, QWidget

__all__ = ["WrappingMapsRow"]

SPACING = 12  # px between maps and operators, as the board's rows (figure.FigureBoard.add_row)


class WrappingMapsRow(QWidget):
    """``maps`` (grids of one shape) with ``ops[i]`` between ``maps[i]`` and ``maps[i + 1]``.

    One line when the row is at least as wide as one line's minimum, else two: the maps but the last on the
    first line, the last under the one before it, its operator in the column of the operator above (a grid
    layout: the maps' columns are equally wide in either arrangement).
    """

    def __init__(self, maps: list[QWidget], ops: list[QLabel], parent=None):
        super().__init__(parent)
        if len(ops) != len(maps) - 1 or len(maps) < 2:
            raise ValueError("a row of n maps needs n - 1 operators between them (n ≥ 2)")
        self.maps, self.ops = list(maps), list(ops)
        for op in self.ops:  # on one line ("× 0.25 =", "softmax →"): the maps get the rest of the width
            op.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Preferred)
            op.setFixedWidth(op.sizeHint().width())
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(SPACING)
        # the widget's minimum is the wrapped one (minimumSizeHint), not the current line's: a one-line
        # minimum would hold the row at ~1,400 px and the scroll area would scroll sideways
        self._grid.setSizeConstraint(QLayout.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        self.wrapped: bool | None = None
        self._arrange(False)

    # -- the two arrangements ------------------------------------------------------------------------------
    def one_line_width(self) -> int:
        """Pixels one line needs: every map at its minimum (every column named) and the operators."""
        maps = sum(m.minimumSizeHint().width() for m in self.maps)
        return maps + sum(op.width() for op in self.ops) + SPACING * (len(self.maps) + len(self.ops) - 1)

    def _wrapped_width(self) -> int:
        """Pixels the two-line arrangement needs: the first line (all maps but the last)."""
        n = len(self.maps) - 1
        cols = max(m.minimumSizeHint().width() for m in self.maps)  # the last map shares a column above it
        ops = [op.width() for op in self.ops[:-1]]
        if n > 1:  # the last operator shares the column of the one before the last map's column
            ops[n - 2] = max(ops[n - 2], self.ops[-1].width())
        return n * cols + sum(ops) + SPACING * (2 * n - 2)

    def _arrange(self, wrap: bool) -> None:
        if wrap == self.wrapped:
            return
        self.wrapped = wrap
        g = self._grid
        for w in self.maps + self.ops:
            g.removeWidget(w)
        for c in range(g.columnCount()):
            g.setColumnStretch(c, 0)
        for r in range(g.rowCount()):
            g.setRowStretch(r, 0)
        n = len(self.maps)
        last = n - 1 if wrap else n  # maps on the first line
        for i in range(last):
            g.addWidget(self.maps[i], 0, 2 * i)
            g.setColumnStretch(2 * i, 1)
            if i < n - 1 and (i < last - 1 or not wrap):
                g.addWidget(self.ops[i], 0, 2 * i + 1, Qt.AlignVCenter)
        if wrap:  # the last map under the one before it, its operator in the operator column to its left
            g.addWidget(self.ops[-1], 1, 2 * (n - 2) - 1 if n > 2 else 0, Qt.AlignVCenter)
            g.addWidget(self.maps[-1], 1, 2 * (n - 2))
            g.setRowStretch(1, 1)
        g.setRowStretch(0, 1)
        self.updateGeometry()

    # -- sizes --------------------------------------------------------------------------------------------------
    def minimumSizeHint(self) -> QSize:
        rows_h = max(m.minimumSizeHint().height() for m in self.maps)
        return QSize(self._wrapped_width(), rows_h * (2 if self.wrapped else 1) + (SPACING if self.wrapped else 0))

    def sizeHint(self) -> QSize:
        hint = self._grid.sizeHint()
        return QSize(max(hint.width(), self.minimumSizeHint().width()), max(hint.height(), self.minimumSizeHint().height()))

    def hasHeightForWidth(self) -> bool:
        return False  # the board's scroll area fits the figure to the window; the height follows _arrange

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        before = self.wrapped
        self._arrange(event.size().width() < self.one_line_width())
        if self.wrapped != before:
            self._grid.activate()  # placed now: an export paints straight after laying the figure out
