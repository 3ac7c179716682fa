"""The six steps' top row: the query chips and, for grouped-query attention, the heads diagram.

Side by side when both fit; the diagram under the chips when its heads need the width. A 32-query-head model's
diagram asks for ~1,600 px: beside the chips in a 1280×720 window the chips got no width at all and the query
could not be picked. The arrangement follows the row's own width, so the window, F5 and an export each get the
one that fits them.
"""

from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QWidget

__all__ = ["QueryRow"]

MIN_CHIPS = 360  # px the chips keep beside the diagram (a few chips a line); less, and the diagram goes under them


class QueryRow(QWidget):
    """``chips`` (stretching) and ``diagram`` (at its preferred width) in one line, or one under the other."""

    def __init__(self, chips: QWidget, diagram: QWidget, parent=None):
        super().__init__(parent)
        self.chips, self.diagram = chips, diagram
        self._box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._box.setContentsMargins(14, 6, 14, 0)
        self._box.addWidget(chips, 1)
        self._box.addWidget(diagram)

    @property
    def stacked(self) -> bool:
        return self._box.direction() == QBoxLayout.Direction.TopToBottom

    def arrange(self, width: int | None = None) -> None:
        """One line or two for ``width`` (default: the row's own), e.g. after the diagram's heads changed."""
        width = self.width() if width is None else width
        margins = self._box.contentsMargins()
        room = width - margins.left() - margins.right() - self._box.spacing()
        stacked = not self.diagram.isHidden() and self.diagram.sizeHint().width() + MIN_CHIPS > room
        direction = QBoxLayout.Direction.TopToBottom if stacked else QBoxLayout.Direction.LeftToRight
        if direction != self._box.direction():
            self._box.setDirection(direction)
            self._box.activate()

    def resizeEvent(self, event) -> None:
        self.arrange(event.size().width())
        super().resizeEvent(event)
