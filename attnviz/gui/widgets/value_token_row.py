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
from attnviz.gui.widgets.hatch import draw_hatch
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["TokenStripItem", "MAX_ZOOM"]

MAX_ZOOM = 2.0  # largest enlargement of the tokens of a short input on a wide figure
# with a height to fill (a slide's rollout strips), the text may grow further and wrap, the cells taller: at ×2 and
# one row, three strips took 45 % of a 1920×1080 page and left the rest blank
FILL_ZOOM = 3.0
FILL_STRETCH = 4.0  # a cell at most this much taller than its text needs (a one-row sentence keeps its row)


def _rows(boxes) -> int:
    """How many wrapped rows the token boxes stand in."""
    return len({round(b.top()) for b in boxes})


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
        self.masked = np.zeros(0, bool)  # tokens the query cannot see (hatched, not coloured as a 0 share)
        self.fill_height: float | None = None  # the height to grow into (set_fill), else the natural one
        self.message = ""
        self.on_hover: Callable[[int | None], None] | None = None
        self.on_click: Callable[[int], None] | None = None
        self.setAcceptHoverEvents(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._boxes: list[QRectF] = []
        self._relayout()

    def set_values(self, tokens, values, indices, marked: int | None = None, message: str = "",
                   masked=None) -> None:
        self.tokens = [display_token(t) for t in tokens]
        self.values = np.asarray(values, dtype=np.float64)
        self.indices = np.asarray(indices, dtype=np.uint8)
        self.masked = np.zeros(len(self.tokens), bool) if masked is None else np.asarray(masked, bool)
        self.marked, self.message = marked, message
        self._relayout()
        self.update()

    def set_fill(self, height: float | None) -> None:
        """Grow into ``height`` px (larger text, wrapped, and taller cells) or, with None, take the natural height."""
        if height != self.fill_height:
            self.fill_height = height
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
        the width instead of a small strip in a corner. Given a height to fill, the largest zoom up to FILL_ZOOM
        whose wrapped rows fit it, then the cells taller (up to FILL_STRETCH) to take the rest."""
        x0 = self._label_w()
        width = max(self.size().width(), x0 + 200)
        natural = sum(self.style.metrics().horizontalAdvance(t) + 15.0 for t in self.tokens)
        zoom = max(1.0, min(MAX_ZOOM, (width - x0 - 8) / natural)) if natural > 0 else 1.0
        fill = self.fill_height if self.tokens and not self.message else None
        one_row = fill is not None and _rows(self._place(zoom, width)[0]) == 1

        def fits(z: float) -> bool:
            # a sentence on one line stays on one line: wrapped to fill a slide, "na vidas [EOS]" stood on a
            # second row under the rest and the sentence no longer read as one
            boxes, height = self._place(z, width)
            return height <= fill and (not one_row or _rows(boxes) == 1)

        if fill is not None and fits(FILL_ZOOM):
            zoom = FILL_ZOOM
        elif fill is not None and fits(zoom):
            lo, hi = zoom, FILL_ZOOM  # the wrapped height grows with the zoom: bisect
            for _ in range(8):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid)
            zoom = lo
        self.zoom = zoom
        self._font = self.style.font(zoom)
        self._boxes, height = self._place(zoom, width, fill)
        if self.message:  # wrapped to the strip's width (on one line it ran under the colour bar beside it)
            height = max(height, math.ceil(self.message_rect(width).height() + 6))
        if abs(self.preferredHeight() - height) > 0.5:
            self.setPreferredHeight(height)
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)

    def _place(self, zoom: float, width: float, fill: float | None = None) -> tuple[list[QRectF], int]:
        """The boxes at ``zoom`` wrapped to ``width`` and the strip's height; with ``fill``, the rows stretched
        towards it."""
        pad, gap = 6.0 * zoom, 3.0
        x0 = self._label_w()
        fm = QFontMetricsF(self.style.font(zoom))
        h = fm.height() + 2 * pad * 0.6
        x, row, rows = x0, 0, []
        for tok in self.tokens:
            w = min(fm.horizontalAdvance(tok) + 2 * pad, width - x0)
            if x + w > width and x > x0:
                x, row = x0, row + 1
            rows.append((row, x, w))
            x += w + gap
        n = row + 1
        if fill is not None:
            h = max(h, min(FILL_STRETCH * h, (fill - 6 - (n - 1) * gap) / n))
        boxes = [QRectF(x, 2.0 + r * (h + gap), w, h) for r, x, w in rows]
        return boxes, math.ceil(2.0 + n * h + (n - 1) * gap + 4)

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
            if i < len(self.masked) and self.masked[i]:
                # hidden from the query: hatched as the head map hatches masked cells, not coloured as a 0 share
                p.fillRect(box, QColor(st.masked))
                draw_hatch(p, box, QColor(st.foreground), spacing=7.0)
                p.setPen(QPen(fg))
                p.drawRect(box)
                p.drawText(box, int(Qt.AlignCenter), fm.elidedText(tok, Qt.ElideRight, box.width() - 4))
                continue
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
