"""A row of maps with operators between them that wraps onto more lines when the figure is narrow.

The matrix form's one-head part shows Q Kᵀ, scaled and P side by side. With every one of 24 columns named
upright at 12 px the three need ~1,400 px; a 1280×720 window's Walkthrough dock is ~990 px wide and scrolled
sideways (K and V of the row above cut until scrolled). Narrower than one line needs, the row puts its last map
on a second line under the one before it, its operator ("softmax →") in the operator column: every map keeps
the same column width (drawn to scale: equal widths for equal columns) and the figure never scrolls sideways.
The overview's Q Kᵀ … P V = Z row wraps the same way.
The choice follows the row's own width, so the window, F5 and an export (laid out at the slide's size) each
get the arrangement that fits them.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QLayout, QSizePolicy, QWidget

__all__ = ["WrappingMapsRow"]

SPACING = 12  # px between maps and operators, as the board's rows (figure.FigureBoard.add_row)


class WrappingMapsRow(QWidget):
    """``maps`` with ``ops[i]`` between ``maps[i]`` and ``maps[i + 1]``, on as few lines as the width allows.

    One line when the row is at least as wide as one line's minimum. Otherwise ``k`` maps on the first line
    (the most that fit) and ``k - 1`` on each line after it, indented by one map: a line starts with the operator
    that led to its first map, in the operator column of the line above (Q Kᵀ × 0.25 = scaled / softmax → P, P
    under the scaled map). A grid layout: every map column is equally wide in any arrangement.
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
        # the widget's minimum is the narrowest arrangement's (minimumSizeHint), not the current one's: a one-line
        # minimum would hold the row at ~1,400 px and the scroll area would scroll sideways
        self._grid.setSizeConstraint(QLayout.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        self.per_line: int | None = None  # maps on the first line (len(maps): one line)
        self._arrange(len(self.maps))

    @property
    def wrapped(self) -> bool:
        """Whether the maps take more than one line."""
        return self.per_line is not None and self.per_line < len(self.maps)

    # -- the arrangements ------------------------------------------------------------------------------------
    def one_line_width(self) -> int:
        """Pixels one line needs: every map at its minimum (every column named) and the operators."""
        maps = sum(m.minimumSizeHint().width() for m in self.maps)
        return maps + sum(op.width() for op in self.ops) + SPACING * (len(self.maps) + len(self.ops) - 1)

    def _width(self, k: int) -> int:
        """Pixels ``k`` maps a line need (k < len(maps)): equal map columns, each operator column as wide as
        the widest operator placed in it."""
        if k >= len(self.maps):
            return self.one_line_width()
        cols = max(m.minimumSizeHint().width() for m in self.maps)
        if k == 1:  # one map a line, no operators (only blank ones allow it: _fewest)
            return cols
        ops = [0] * (k - 1)
        for i in range(1, len(self.maps)):  # map i's operator stands in the column left of it
            c = (self._place(i, k)[1] - 1) // 2
            ops[c] = max(ops[c], self.ops[i - 1].width())
        return k * cols + sum(ops) + SPACING * (2 * k - 2)

    def _place(self, i: int, k: int) -> tuple[int, int]:
        """(line, column) of map ``i`` with ``k`` maps on the first line (its operator: one column left)."""
        if i < k:
            return 0, 2 * i
        if k == 1:
            return i, 0
        j = i - k  # maps after the first line, k - 1 a line from column 2
        return 1 + j // (k - 1), 2 + 2 * (j % (k - 1))

    def _fewest(self) -> int:
        """The fewest maps a line: 2, as an operator needs a map before it on its line; 1 when the operators
        are only spaces (maps compared side by side, stacked when narrow)."""
        return 1 if all(not op.text().strip() for op in self.ops) else 2

    def _fitting(self, width: int) -> int:
        """The most maps a line that fit ``width`` (at least :meth:`_fewest`: narrower still, the figure scrolls)."""
        for k in range(len(self.maps), self._fewest(), -1):
            if width >= self._width(k):
                return k
        return self._fewest()

    def _arrange(self, k: int) -> None:
        if k == self.per_line:
            return
        self.per_line = k
        g = self._grid
        for w in self.maps + self.ops:
            g.removeWidget(w)
        for c in range(g.columnCount()):
            g.setColumnStretch(c, 0)
        for r in range(g.rowCount()):
            g.setRowStretch(r, 0)
        for i, m in enumerate(self.maps):
            line, col = self._place(i, k)
            g.addWidget(m, line, col)
            g.setColumnStretch(col, 1)
            g.setRowStretch(line, 1)
            if i and col:
                g.addWidget(self.ops[i - 1], line, col - 1, Qt.AlignVCenter)
            if i:
                self.ops[i - 1].setVisible(bool(col))  # a blank operator at a line's start is not placed
        self.updateGeometry()

    # -- sizes --------------------------------------------------------------------------------------------------
    def _lines(self) -> int:
        return self._place(len(self.maps) - 1, self.per_line)[0] + 1

    def minimumSizeHint(self) -> QSize:
        rows_h = max(m.minimumSizeHint().height() for m in self.maps)
        lines = self._lines()
        return QSize(self._width(self._fewest()), rows_h * lines + SPACING * (lines - 1))

    def sizeHint(self) -> QSize:
        hint, low = self._grid.sizeHint(), self.minimumSizeHint()
        return QSize(max(hint.width(), low.width()), max(hint.height(), low.height()))

    def hasHeightForWidth(self) -> bool:
        return False  # the board's scroll area fits the figure to the window; the height follows _arrange

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        before = self.per_line
        self._arrange(self._fitting(event.size().width()))
        if self.per_line != before:
            self._grid.activate()  # placed now: an export paints straight after laying the figure out
