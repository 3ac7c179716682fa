"""Which query heads share which key/value head (grouped-query and multi-query attention)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnviz.gui.style import ViewStyle, head_colour
from attnviz.gui.widgets.legible import floor_pt

__all__ = ["GqaDiagram", "kv_groups"]


def kv_groups(n_heads: int, n_kv_heads: int) -> list[list[int]]:
    """Query heads reading each key/value head: query head h reads kv head h // (H / H_kv)."""
    group = n_heads // n_kv_heads
    return [list(range(g * group, (g + 1) * group)) for g in range(n_kv_heads)]


class GqaDiagram(QWidget):
    """Query heads in a row above their key/value heads, a line from each to the one it reads."""

    def __init__(self, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.style = style or ViewStyle()
        self.n_heads, self.n_kv_heads, self.selected = 1, 1, 0
        # as wide as it is given (down to its minimum): every head stays in the picture
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)

    def set_heads(self, n_heads: int, n_kv_heads: int, selected: int) -> None:
        self.n_heads, self.n_kv_heads, self.selected = n_heads, n_kv_heads, selected
        self.updateGeometry()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        fm = QFontMetricsF(self.style.font(1.1))
        return QSize(int(190 + self.n_heads * (fm.horizontalAdvance("Q00") + 14)), int(fm.height() * 5.2))

    def minimumSizeHint(self) -> QSize:
        # a box keeps room for its name while the heads fit in ~640 px (4 query heads beside Q, K, V were
        # squeezed to 5-px boxes with no names); 32 query heads shrink to a few pixels before a head is cut
        fm = QFontMetricsF(self.style.font(1.1))
        per = max(5.0, min(fm.horizontalAdvance("Q00") + 8, 640 / max(self.n_heads, 1)))
        return QSize(int(self._label_width() + self.n_heads * per + 8), self.sizeHint().height())

    def _label_width(self) -> float:
        fm = QFontMetricsF(self.style.font(1.1))
        kind = self.kind()
        return max(fm.horizontalAdvance("key/value heads"), fm.horizontalAdvance(f"query heads ({kind})")) + 12

    def kind(self) -> str:
        return "MQA" if self.n_kv_heads == 1 else "GQA" if self.n_kv_heads < self.n_heads else "MHA"

    def boxes(self) -> tuple[list[QRectF], list[QRectF]]:
        """Query heads' and key/value heads' boxes at the current width: every head, side by side."""
        fm = QFontMetricsF(self.style.font(1.1))
        label_w = self._label_width()
        full_w, box_h = fm.horizontalAdvance("Q00") + 8, fm.height() + 6
        step_q = max(1.0, (self.width() - label_w - 4) / max(self.n_heads, 1))
        box_w = max(2.0, min(full_w, step_q - 2))
        y_q, y_kv = 2.0, self.height() - box_h - 2
        q = [QRectF(label_w + step_q * (h + 0.5) - box_w / 2, y_q, box_w, box_h) for h in range(self.n_heads)]
        kv = []
        for members in kv_groups(self.n_heads, self.n_kv_heads):
            cx = sum(q[h].center().x() for h in members) / len(members)
            span = q[members[-1]].right() - q[members[0]].left()
            w = max(2.0, min(full_w, span))
            kv.append(QRectF(cx - w / 2, y_kv, w, box_h))
        return q, kv

    def _text(self, box: QRectF, prefix: str, i: int, fm: QFontMetricsF) -> str:
        """"Q7" when it fits the box, else "7", else nothing (see :meth:`label`)."""
        for text in (f"{prefix}{i}", str(i)):
            if fm.horizontalAdvance(text) + 4 <= box.width():
                return text
        return ""

    def label(self, box: QRectF, prefix: str, i: int) -> tuple[str, QFont]:
        """The text of a head's box and its font: "Q7" or "7" in the diagram's font, else the number in the
        smallest legible font (32 query heads in a docked window: boxes too narrow for "31" in the
        diagram's font lost every number from 10 on), else nothing (the hover and the title name it)."""
        font = self.style.font(1.1)
        text = self._text(box, prefix, i, QFontMetricsF(font))
        if not text:
            small = QFont(font)
            small.setPointSizeF(min(font.pointSizeF(), floor_pt(self.style, self)))
            text = str(i) if QFontMetricsF(small).horizontalAdvance(str(i)) + 4 <= box.width() else ""
            font = small
        return text, font

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.setRenderHint(QPainter.TextAntialiasing)
        font = self.style.font(1.1)
        p.setFont(font)
        fm = QFontMetricsF(font)
        fg = QColor(self.style.foreground)
        label_w = self._label_width()
        q_boxes, kv_boxes = self.boxes()
        box_h = q_boxes[0].height() if q_boxes else fm.height() + 6
        p.setPen(fg)
        p.drawText(QRectF(0, q_boxes[0].top(), label_w, box_h), int(Qt.AlignLeft | Qt.AlignVCenter),
                   f"query heads ({self.kind()})")
        p.drawText(QRectF(0, kv_boxes[0].top(), label_w, box_h), int(Qt.AlignLeft | Qt.AlignVCenter),
                   "key/value heads")
        for g, members in enumerate(kv_groups(self.n_heads, self.n_kv_heads)):
            kv_box = kv_boxes[g]
            chosen = self.selected in members
            for h in members:
                p.setPen(QPen(QColor(head_colour(h)) if chosen else fg.lighter(150), 3 if h == self.selected else 1))
                p.drawLine(QPointF(q_boxes[h].center().x(), q_boxes[h].bottom()),
                           QPointF(kv_box.center().x(), kv_box.top()))
            p.setPen(QPen(fg, 2 if chosen else 1))
            p.setBrush(QColor(self.style.masked) if chosen else QColor(self.style.background))
            p.drawRect(kv_box)
            p.setPen(fg)
            text, f = self.label(kv_box, "KV", g)
            p.setFont(f)
            p.drawText(kv_box, int(Qt.AlignCenter), text)
        for h, box in enumerate(q_boxes):
            p.setPen(QPen(fg, 3 if h == self.selected else 1))
            p.setBrush(QColor(head_colour(h)))
            p.drawRect(box)
            col = QColor(head_colour(h))
            lum = 0.299 * col.red() + 0.587 * col.green() + 0.114 * col.blue()
            p.setPen(QColor("#000000") if lum > 140 else QColor("#ffffff"))
            text, f = self.label(box, "Q", h)
            p.setFont(f)
            p.drawText(box, int(Qt.AlignCenter), text)
        p.end()
