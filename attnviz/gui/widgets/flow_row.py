"""FlowRow: a row of controls that wraps onto further lines when its dock is narrow.

A plain QHBoxLayout makes its minimum width the sum of all controls, so a view with many controls
(rollout: fusion, discard, residual, start layer, overlay) forced its dock ~700 px wide. Here each
item keeps its size hint and items move to the next line instead (Qt's "flow layout" example).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLabel, QSizePolicy, QWidget

__all__ = ["FlowLayout", "FlowRow"]


class FlowLayout(QLayout):
    """Left to right, wrapping; height depends on the width (heightForWidth)."""

    def __init__(self, parent=None, spacing: int = 8):
        super().__init__(parent)
        self._items = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    # -- QLayout interface ---------------------------------------------------------------------
    def addItem(self, item) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:
        # one line: what the row asks for when there is room
        m = self.contentsMargins()
        hints = [item.sizeHint() for item in self._items]
        width = sum(h.width() for h in hints) + self.spacing() * max(0, len(hints) - 1)
        height = max((h.height() for h in hints), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        # the widest single item: everything else can wrap
        m = self.contentsMargins()
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _arrange(self, rect: QRect, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line_height = area.x(), area.y(), 0
        gap = self.spacing()
        for item in self._items:
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:  # wrap (never before the first item)
                x, y = area.x(), y + line_height + gap
                line_height = 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + gap
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y() + m.bottom()


class FlowRow(QWidget):
    """A widget holding a FlowLayout; :meth:`add_labelled` keeps a caption and its control together."""

    def __init__(self, parent=None, spacing: int = 10):
        super().__init__(parent)
        self.flow = FlowLayout(self, spacing)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def add(self, widget: QWidget) -> QWidget:
        self.flow.addWidget(widget)
        return widget

    def add_labelled(self, caption: str, widget: QWidget) -> QWidget:
        """``caption`` and ``widget`` side by side, wrapped as one unit."""
        pair = QWidget(self)
        lay = QHBoxLayout(pair)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addWidget(QLabel(caption, pair))
        lay.addWidget(widget)
        return self.add(pair)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.flow.heightForWidth(width)
