"""The input tokens as clickable chips: click one to make it the query; the query is filled orange."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.matrix_grid import visible_label

__all__ = ["TokenStrip", "QUERY_COLOUR"]

QUERY_COLOUR = "#EE7733"  # Paul Tol's vibrant orange, the query everywhere in the walkthrough


class TokenStrip(QWidget):
    """Tokens laid out left to right, wrapping; ``clicked(i)`` when token i is clicked.

    A long input's strip holds a window of its tokens (``offset``: the first one's position, ``total``: how
    many the input has); ``clicked`` and ``query`` are positions in the whole input, and the caption says
    which positions are shown."""

    clicked = Signal(int)

    def __init__(self, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.style = style or ViewStyle()
        self.tokens: list[str] = []
        self.query: int | None = None  # an index of ``tokens``
        self.offset = 0
        self.caption = "query:"
        self._boxes: list[QRectF] = []
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("click a token to make it the query")

    def set_tokens(self, tokens, query: int | None, offset: int = 0, total: int | None = None) -> None:
        """Show ``tokens`` (positions ``offset``… of an input of ``total``); ``query`` is a position."""
        self.tokens = [str(t) for t in tokens]
        self.offset = int(offset)
        self.query = None if query is None else int(query) - self.offset
        n = len(self.tokens)
        windowed = total is not None and n < total
        self.caption = f"query (positions {offset}–{offset + n - 1} of {total:,}):" if windowed else "query:"
        self.updateGeometry()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self.updateGeometry()
        self.update()

    def _font(self):
        return self.style.font(1.3)

    def _layout(self, width: float) -> list[QRectF]:
        fm = QFontMetricsF(self._font())
        h = fm.height() + 10
        # a long input's caption (which positions) is a line of its own: beside the chips it left them no room
        above = self.offset > 0 or self.caption != "query:"
        x0 = 0.0 if above else fm.horizontalAdvance(self.caption) + 12
        x, y, boxes = x0, (h + 2.0) if above else 2.0, []
        for t in self.tokens:
            w = fm.horizontalAdvance(_shown(t)) + 16
            if x + w > width - 4 and x > x0:
                x, y = x0, y + h + 6
            boxes.append(QRectF(x, y, w, h))
            x += w + 6
        return boxes

    def heightForWidth(self, width: int) -> int:
        boxes = self._layout(width)
        return int(boxes[-1].bottom() + 4) if boxes else 24

    def hasHeightForWidth(self) -> bool:
        # the strip sets its own height when resized; height-for-width would make a scroll area
        # give the whole figure its preferred height instead of fitting it to the window
        return False

    def sizeHint(self) -> QSize:
        w = max(self.width(), 600)
        return QSize(w, min(self.heightForWidth(w), 200))

    def resizeEvent(self, event) -> None:
        h = min(self.heightForWidth(self.width()), 200)
        if h != self.height():
            self.setFixedHeight(h)
        super().resizeEvent(event)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.setRenderHint(QPainter.TextAntialiasing)
        self._boxes = self._layout(self.width())
        font = self._font()
        p.setFont(font)
        fg = QColor(self.style.foreground)
        fm = QFontMetricsF(font)
        p.setPen(fg)
        p.drawText(QRectF(0, 2, fm.horizontalAdvance(self.caption) + 8, fm.height() + 10),
                   int(Qt.AlignLeft | Qt.AlignVCenter), self.caption)  # a long input's: a line above the chips
        for i, (t, box) in enumerate(zip(self.tokens, self._boxes)):
            if box.top() > self.height():
                break
            chosen = i == self.query
            p.setPen(QPen(QColor(QUERY_COLOUR) if chosen else fg, 2 if chosen else 1))
            p.setBrush(QColor(QUERY_COLOUR) if chosen else QColor(self.style.background))
            p.drawRoundedRect(box, 5, 5)
            p.setPen(QColor("#000000") if chosen else fg)
            p.drawText(box, int(Qt.AlignCenter), _shown(t))
        p.end()

    def token_at(self, x: float, y: float) -> int | None:
        for i, box in enumerate(self._boxes or self._layout(self.width())):
            if box.contains(x, y):
                return i
        return None

    def mousePressEvent(self, event) -> None:
        i = self.token_at(event.position().x(), event.position().y())
        if i is not None:
            self.clicked.emit(self.offset + i)


def _shown(token: str) -> str:
    """A token's chip text, as the walkthrough's matrices name it ("Ġcat" as "cat", a space as "␣")."""
    return visible_label(token)
