"""Which query heads share which key/value head (grouped-query and multi-query attention)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from attnviz.gui.style import ViewStyle, head_colour

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
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)

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

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        p.setRenderHint(QPainter.TextAntialiasing)
        font = self.style.font(1.1)
        p.setFont(font)
        fm = QFontMetricsF(font)
        fg = QColor(self.style.foreground)
        kind = "MQA" if self.n_kv_heads == 1 else "GQA" if self.n_kv_heads < self.n_heads else "MHA"
        label_w = max(fm.horizontalAdvance("key/value heads"), fm.horizontalAdvance(f"query heads ({kind})")) + 12
        box_w, box_h = fm.horizontalAdvance("Q00") + 8, fm.height() + 6
        avail = self.width() - label_w - 4
        step_q = max(box_w + 4, avail / max(self.n_heads, 1))
        p.setPen(fg)
        y_q, y_kv = 2.0, self.height() - box_h - 2
        p.drawText(QRectF(0, y_q, label_w, box_h), int(Qt.AlignLeft | Qt.AlignVCenter), f"query heads ({kind})")
        p.drawText(QRectF(0, y_kv, label_w, box_h), int(Qt.AlignLeft | Qt.AlignVCenter), "key/value heads")
        groups = kv_groups(self.n_heads, self.n_kv_heads)
        q_centre = {h: label_w + step_q * (h + 0.5) for h in range(self.n_heads)}
        for g, members in enumerate(groups):
            cx = sum(q_centre[h] for h in members) / len(members)
            chosen = self.selected in members
            for h in members:
                p.setPen(QPen(QColor(head_colour(h)) if chosen else fg.lighter(150), 3 if h == self.selected else 1))
                p.drawLine(QPointF(q_centre[h], y_q + box_h), QPointF(cx, y_kv))
            kv_box = QRectF(cx - box_w / 2, y_kv, box_w, box_h)
            p.setPen(QPen(fg, 2 if chosen else 1))
            p.setBrush(QColor(self.style.masked) if chosen else QColor(self.style.background))
            p.drawRect(kv_box)
            p.setPen(fg)
            p.drawText(kv_box, int(Qt.AlignCenter), f"KV{g}")
        for h in range(self.n_heads):
            box = QRectF(q_centre[h] - box_w / 2, y_q, box_w, box_h)
            p.setPen(QPen(fg, 3 if h == self.selected else 1))
            p.setBrush(QColor(head_colour(h)))
            p.drawRect(box)
            col = QColor(head_colour(h))
            lum = 0.299 * col.red() + 0.587 * col.green() + 0.114 * col.blue()
            p.setPen(QColor("#000000") if lum > 140 else QColor("#ffffff"))
            p.drawText(box, int(Qt.AlignCenter), f"Q{h}")
        p.end()
