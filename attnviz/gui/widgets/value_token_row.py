"""A row of tokens whose backgrounds show one value each (rollout of one query), wrapping as needed."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QSizePolicy

from attnviz.gui.style import ViewStyle, colour_lut
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["TokenStripItem", "MAX_ZOOM"]

MAX_ZOOM = 2.0  # largest enlargement of the tokens of a short input on a wide figure


class TokenStripItem(pg.GraphicsWidget):
    """``label`` at the left, then every token in a box coloured by its LUT index.

    ``values`` are the exact numbers (hover), ``indices`` the uint8 colours on a shared scale; the
    marked token (the query whose row is shown) gets an outline. ``message`` replaces the tokens
    when there is nothing to show (e.g. no gradients captured).
    """

    def __init__(self, style: ViewStyle | None = None, label: str = ""):
        super().__init__()
        self.style = style or ViewStyle()
        self.label = label
        self.tokens: list[str] = []
        self.values = np.zeros(0)
        self.indices = np.zeros(0, np.uint8)
        self.marked: int | None = None
        self.message = ""
        self.on_hover: Callable[[int | None], None] | None = None
        self.on_click: Callable[[int], None] | None = None
        self.setAcceptHoverEvents(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._boxes: list[QRectF] = []
        self._relayout()

    def set_values(self, tokens, values, indices, marked: int | None = None, message: str = "") -> None:
        self.tokens = [display_token(t) for t in tokens]
        self.values = np.asarray(values, dtype=np.float64)
        self.indices = np.asarray(indices, dtype=np.uint8)
        self.marked, self.message = marked, message
        self._relayout()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self._relayout()
        self.update()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._relayout()

    def _label_w(self) -> float:
        return self.style.metrics(bold=True).horizontalAdvance("gradient rollout") + 16

    def _relayout(self) -> None:
        """Place the token boxes in wrapped rows for the current width; fix the height to fit.

        A short input on a wide figure (a slide) gets larger tokens, up to MAX_ZOOM, so one row fills
        the width instead of a small strip in a corner."""
        pad, gap = 6.0, 3.0
        x0 = self._label_w()
        width = max(self.size().width(), x0 + 200)
        fm = self.style.metrics()
        natural = sum(fm.horizontalAdvance(t) + 2 * pad + gap for t in self.tokens)
        self.zoom = max(1.0, min(MAX_ZOOM, (width - x0 - 8) / natural)) if natural > 0 else 1.0
        self._font = self.style.font(self.zoom)
        fm = QFontMetricsF(self._font)
        pad *= self.zoom
        h = fm.height() + 2 * pad * 0.6
        x, y = x0, 2.0
        self._boxes = []
        for tok in self.tokens:
            w = min(fm.horizontalAdvance(tok) + 2 * pad, width - x0)
            if x + w > width and x > x0:
                x, y = x0, y + h + gap
            self._boxes.append(QRectF(x, y, w, h))
            x += w + gap
        if self.message:  # wrapped to the strip's width (on one line it ran under the colour bar beside it)
            h = max(h, self.message_rect(width).height())
        height = math.ceil(y + h + 4)
        if abs(self.preferredHeight() - height) > 0.5:
            self.setPreferredHeight(height)
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)

    def message_rect(self, width: float) -> QRectF:
        """Where the message goes (its top at 0): right of the label, wrapped to ``width``."""
        x0 = self._label_w()
        fm = QFontMetricsF(self._font)
        room = max(width - x0 - 8, 40.0)
        text = fm.boundingRect(QRectF(0, 0, room, 10_000), int(Qt.AlignLeft | Qt.TextWordWrap), self.message)
        return QRectF(x0, 0, room, max(text.height(), fm.height()))

    def paint(self, p, *args):
        st = self.style
        fm = st.metrics()
        fg = QColor(st.foreground)
        p.setFont(st.font(bold=True))
        p.setPen(QPen(fg))
        first = self._boxes[0] if self._boxes else QRectF(0, 2, 10, fm.height() + 7)
        p.drawText(QRectF(0, first.top(), self._label_w() - 8, first.height()),
                   int(Qt.AlignRight | Qt.AlignVCenter), self.label)
        p.setFont(self._font)
        fm = QFontMetricsF(self._font)
        if self.message:
            rect = self.message_rect(max(self.size().width(), self._label_w() + 200))
            p.drawText(rect.translated(0, first.top()), int(Qt.AlignLeft | Qt.AlignVCenter | Qt.TextWordWrap),
                       self.message)
            return
        lut = colour_lut(st)
        for i, (tok, box) in enumerate(zip(self.tokens, self._boxes)):
            r, g, b, _ = (int(c) for c in lut[self.indices[i]])
            p.fillRect(box, QColor(r, g, b))
            light = 0.299 * r + 0.587 * g + 0.114 * b > 140
            p.setPen(QPen(QColor("#000000" if light else "#ffffff")))
            p.drawText(box, int(Qt.AlignCenter), fm.elidedText(tok, Qt.ElideRight, box.width() - 4))
            if i == self.marked:
                p.setPen(QPen(fg, 2 * st.line_width))
                p.drawRect(box.adjusted(-1, -1, 1, 1))

    def index_at(self, pos: QPointF) -> int | None:
        for i, box in enumerate(self._boxes):
            if box.contains(pos):
                return i
        return None

    def hoverEvent(self, ev):
        if self.on_hover is not None:
            self.on_hover(None if ev.isExit() or self.message else self.index_at(ev.pos()))

    def mouseClickEvent(self, ev):
        i = None if self.message else self.index_at(ev.pos())
        if ev.button() == Qt.LeftButton and i is not None and self.on_click is not None:
            ev.accept()
            self.on_click(i)
