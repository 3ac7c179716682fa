"""A colour bar that states its scale honestly: exact ends, nice ticks between, a masked swatch."""

from __future__ import annotations

import math
import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtWidgets import QGraphicsItem, QSizePolicy
from PySide6.QtGui import QColor, QLinearGradient, QPen

from attnviz.gui.style import ViewStyle, colour_lut
from attnviz.gui.widgets.hatch import draw_hatch

__all__ = ["ColourBarItem", "nice_ticks", "format_level"]


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round values (1, 2 or 5 × 10^k steps) strictly inside (lo, hi)."""
    span = hi - lo
    if not math.isfinite(span) or span <= 0:
        return []
    raw = span / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    ticks = [first + i * step for i in range(int(span / step) + 2)]
    eps = step * 1e-6
    return [round(t, 12) for t in ticks if lo + eps < t < hi - eps]


def format_level(v: float) -> str:
    """A short, exact-enough label: 0, 1, 0.734, 1.2e-05, with a real minus sign ("−12.1": the hyphen of "-12.1"
    reads as a dash on a projector, and every other number on the slides has the sign)."""
    if v == 0:
        return "0"
    text = f"{v:.2g}" if abs(v) >= 1e4 or abs(v) < 1e-3 else f"{v:.3g}"
    return text.replace("-", "\u2212")


class ColourBarItem(pg.GraphicsWidget):
    """Vertical colour bar for the index-LUT heatmaps: levels, a label, optional masked legend."""

    def __init__(self, style: ViewStyle | None = None, label: str = ""):
        super().__init__()
        self.style = style or ViewStyle()
        self.levels = (0.0, 1.0)
        self.label = label
        self.show_masked = False
        self.diverging = False  # signed data: the style's diverging map, centred on 0 by the caller's levels
        self.peers = [self]  # the bars that share this one's width (share_width)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # see TokenAxisItem
        # the width follows the height (a shorter bar wraps its label onto more lines) in the layout's own
        # pass: the grid layout asks sizeHint for the width at the height it gives the bar, before it places
        # the maps beside it. Re-widened from resizeEvent instead, it moved an exported figure's maps after
        # their axes were placed (row labels over their matrix), and a narrowing one never settled
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setWidthForHeight(True)
        self.setSizePolicy(policy)
        self._update_width()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.update()  # the device-coordinate cache was drawn at the old size

    def sizeHint(self, which, constraint=QSizeF()):
        hint = super().sizeHint(which, constraint)
        if not self.style.colour_bar:
            return hint
        if constraint.height() <= 0 and which == Qt.SizeHint.MaximumSize:
            return hint  # bounded by the width at the height the layout gives (the grid asks again)
        height = constraint.height() if constraint.height() > 0 else self.height()
        return QSizeF(self.width_at(height), hint.height())

    def width_at(self, height: float) -> int:
        """The width this bar and the bars sharing its width (share_width) need at ``height``."""
        return max(bar._natural_width(height) for bar in self.peers)

    def set_levels(self, lo: float, hi: float) -> None:
        self.levels = (float(lo), float(hi))
        self._update_width()
        self.update()

    def set_label(self, text: str) -> None:
        self.label = text
        self._update_width()
        self.update()

    def set_diverging(self, on: bool) -> None:
        """Draw with the style's diverging colour map (signed data, levels symmetric around 0)."""
        self.diverging = bool(on)
        self.update()

    def set_masked_legend(self, show: bool) -> None:
        self.show_masked = bool(show)
        self._update_width()
        self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self._update_width()
        self.update()

    def _texts(self) -> list[str]:
        lo, hi = self.levels
        texts = [format_level(lo), format_level(hi)] + [format_level(t) for t in nice_ticks(lo, hi)]
        return texts + (["masked"] if self.show_masked else [])

    def _update_width(self) -> None:
        if not self.style.colour_bar:  # hidden items still take layout space: collapse instead
            self.setFixedWidth(0)
            return
        for bar in self.peers:  # a width fixed earlier (no colour bar, a lesson's empty bar) is let go
            bar.setMinimumWidth(-1)
            bar.setMaximumWidth(-1)
            bar.updateGeometry()  # the layout asks sizeHint again (width_at)

    def _natural_width(self, height: float | None = None) -> int:
        """The width the ticks and the label's lines need at ``height`` (default: the bar's present height)."""
        fm = self.style.metrics()
        text_w = max(fm.horizontalAdvance(t) for t in self._texts())
        return math.ceil(self._bar_w() + 6 + text_w + 6 + fm.height() * len(self._label_lines(height)) + 4)

    @staticmethod
    def share_width(bars) -> None:
        """Keep ``bars`` as wide as the widest of them, now and whenever one is resized or relabelled (the
        pictures beside them stay in aligned columns)."""
        bars = list(bars)
        for bar in bars:
            bar.peers = bars
        bars[0]._update_width()

    def _label_lines(self, height: float | None = None) -> list[str]:
        """The label in lines: what the values are, then how they map to colours ("a · b" → two
        lines), so a short bar in a small dock still states its scale in full; a part longer than the
        bar is wrapped at its spaces (a short grid's "previous-token score" was elided)."""
        parts = [part for part in self.label.split(" · ") if part] if self.label else []
        height = self.height() if height is None else height
        room = self._bar_rect(height).height() if height > 0 else 0.0
        if room <= 0:
            return parts
        fm = self.style.metrics()
        lines = []
        for part in parts:
            line = ""
            for word in re.findall(r"\S+?-(?=\S)|\S+", part):  # "previous-token" may break after its hyphen
                wider = (line + word if line.endswith("-") else f"{line} {word}") if line else word
                if line and fm.horizontalAdvance(wider) > room:
                    lines.append(line)
                    line = word
                else:
                    line = wider
            lines.append(line)
        return lines

    def _bar_rect(self, height: float | None = None) -> QRectF:
        fm = self.style.metrics()
        top = fm.height() / 2 + 2
        bottom = (self.height() if height is None else height) - fm.height() / 2 - 2 - (fm.height() * 1.6 if self.show_masked else 0)
        return QRectF(2, top, self._bar_w(), max(bottom - top, 1))

    def _bar_w(self) -> float:
        return 14 * max(1.0, self.style.font_scale)

    def tick_rows(self) -> list[tuple[float, float]]:
        """(value, y) of the ticks drawn: the exact ends always, an in-between tick only where its label
        keeps about a blank line clear of every label kept before it (at a lesson's 1280×720 bar, "−10" one
        line above "−12.1" read as a two-line "−10 −12.1", not as two places on the scale)."""
        fm = self.style.metrics()
        bar = self._bar_rect()
        lo, hi = self.levels
        span = (hi - lo) or 1.0
        pitch = fm.height() * 1.5  # label centres this far apart leave an ink gap about a digit tall
        rows = []
        for v in [lo, hi] + nice_ticks(lo, hi):
            y = bar.bottom() - (v - lo) / span * bar.height()
            if len(rows) < 2 or all(abs(y - kept) >= pitch for _, kept in rows):
                rows.append((v, y))
        return rows

    def paint(self, p, *args):
        st = self.style
        if not st.colour_bar:
            return
        font = st.font()
        fm = st.metrics()
        p.setFont(font)
        fg = QColor(st.foreground)
        r = self.boundingRect()
        bar = self._bar_rect()
        lut = colour_lut(st, self.diverging)
        grad = QLinearGradient(bar.bottomLeft(), bar.topLeft())  # low values at the bottom
        for i in np.linspace(0, 254, 33).astype(int):
            grad.setColorAt(i / 254, QColor(*lut[i]))
        p.fillRect(bar, grad)
        p.setPen(QPen(fg, 1))
        p.drawRect(bar)
        for v, y in self.tick_rows():
            p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y))
            text_rect = QRectF(bar.right() + 6, y - fm.height() / 2, r.width(), fm.height())
            p.drawText(text_rect, int(Qt.AlignLeft | Qt.AlignVCenter), format_level(v))
        lines = self._label_lines()
        if lines:
            p.save()
            # beside its own ticks: a bar the layout made wider than it needs (the word-order slide's) drew its
            # label at its far edge, next to the other panel's map
            right = min(r.width(), self._natural_width())
            p.translate(right - 2 - fm.height() * (len(lines) - 1), bar.center().y())
            p.rotate(-90)
            for i, line in enumerate(lines):  # rotated: later lines further right
                p.drawText(QRectF(-bar.height() / 2, -fm.height() + i * fm.height(), bar.height(), fm.height()),
                           int(Qt.AlignCenter), fm.elidedText(line, Qt.ElideRight, bar.height()))
            p.restore()
        if self.show_masked:
            sw = QRectF(2, bar.bottom() + fm.height() * 0.6 + 2, self._bar_w(), fm.height())
            p.fillRect(sw, QColor(st.masked))
            draw_hatch(p, sw, fg, spacing=5)
            p.setPen(QPen(fg, 1))
            p.drawRect(sw)
            p.drawText(QRectF(sw.right() + 6, sw.top(), r.width(), sw.height()),
                       int(Qt.AlignLeft | Qt.AlignVCenter), "masked")
