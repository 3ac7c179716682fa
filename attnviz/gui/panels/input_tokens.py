"""The token strip: text → tokens → IDs (and, for BPE, the merges that built each token).

Each token is a chip; clicking one selects it as the query in every view.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QScrollArea, QSizePolicy, QWidget

from attnviz.text.token_strip import StripData

__all__ = ["TokenStrip", "TokenStripWidget", "shown_token"]


MAX_CACHED_WIDTH = 8192  # px: longer strips are not cached in a pixmap (memory; Qt's 32767-px limit)


class TokenStripWidget(QWidget):
    """Paints the chips; ``token_clicked(index)`` when one is clicked."""

    token_clicked = Signal(int)
    PAD = 6

    def __init__(self, parent=None):
        super().__init__(parent)
        self.data = StripData([], [])
        self.selected: int | None = None
        self._rects: list[QRectF] = []
        # the chips drawn once per input/selection: a keystroke repaints the window more than once
        self._pixmap: QPixmap | None = None
        self._chips: dict[tuple, QPixmap] = {}  # one chip's picture by what it shows
        self._widths: dict[tuple, float] = {}  # one chip's width by what it shows (in the current font)
        self.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def set_data(self, data: StripData) -> None:
        self.data = data
        if self.selected is not None and self.selected >= len(data.tokens):
            self.selected = None
        self._layout()
        self._redraw()

    def set_selected(self, index: int | None) -> None:
        if index != self.selected:
            self.selected = index
            self._redraw()

    def _redraw(self) -> None:
        self._pixmap = None
        self.update()

    def _rows(self) -> int:
        return 3 if any(self.data.merges) else 2

    def _layout(self) -> None:
        fm = QFontMetrics(self.font())
        small = QFontMetrics(self._small_font())
        x, self._rects = float(self.PAD), []
        line = fm.height()
        height = line + small.height() * (self._rows() - 1) + 2 * self.PAD
        if len(self._widths) > 4096:  # a long session of edits: start again
            self._widths.clear()
        for i, tok in enumerate(self.data.tokens):
            merges = tuple(self.data.merges[i]) if self.data.merges and self.data.merges[i] else ()
            key = (tok, self.data.ids[i], merges)
            w = self._widths.get(key)
            if w is None:  # measured once per token: a keystroke re-laid 128 chips (~4 ms of text metrics)
                texts = [fm.horizontalAdvance(shown_token(tok)), small.horizontalAdvance(str(self.data.ids[i]))]
                if merges:
                    texts.append(small.horizontalAdvance(shown_merges(merges)))
                w = self._widths[key] = max(texts) + 2 * self.PAD
            self._rects.append(QRectF(x, self.PAD / 2, w, height - self.PAD))
            x += w + 4
        self.setFixedSize(max(int(x + self.PAD), 10), int(height))

    def _tip(self, i: int) -> str:
        tip = f"position {i}: {self.data.tokens[i]!r} → id {self.data.ids[i]}"
        if self.data.merges and self.data.merges[i]:
            tip += "\nBPE merges: " + shown_merges(self.data.merges[i], " → ")
        return tip

    def _small_font(self):
        f = self.font()
        f.setPointSizeF(max(f.pointSizeF() * 0.8, 6.0))
        return f

    def sizeHint(self) -> QSize:
        return self.size()

    def paintEvent(self, event) -> None:
        ratio = self.devicePixelRatioF()
        size = self.size() * ratio
        if size.width() > MAX_CACHED_WIDTH:  # a very long input: draw the chips in view, uncached
            p = QPainter(self)
            self._paint_chips(p, QRectF(event.rect()))
            p.end()
            return
        if self._pixmap is None or self._pixmap.size() != size:
            self._pixmap = QPixmap(size)
            self._pixmap.setDevicePixelRatio(ratio)
            self._pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(self._pixmap)
            self._paint_chips(painter)
            painter.end()
        p = QPainter(self)
        p.drawPixmap(0, 0, self._pixmap)
        p.end()

    def _paint_chips(self, p: QPainter, exposed: QRectF | None = None) -> None:
        # each chip is drawn once into a small pixmap and reused while its token, id and selection
        # stay: a keystroke changes one or two chips, and antialiased text for every chip cost ~5 ms
        ratio = p.device().devicePixelRatioF() if p.device() is not None else 1.0
        for i, r in enumerate(self._rects):
            if exposed is not None and not r.intersects(exposed):
                continue
            merges = tuple(self.data.merges[i]) if self.data.merges else ()
            key = (self.data.tokens[i], self.data.ids[i], merges, i == self.selected, int(r.width()), int(r.height()),
                   ratio)
            chip = self._chips.get(key)
            if chip is None:
                if len(self._chips) > 4096:  # a long session of edits: start again
                    self._chips.clear()
                chip = self._chips[key] = self._chip_pixmap(i, r, ratio)
            p.drawPixmap(QPointF(r.left() - 1, r.top() - 1), chip)

    def _chip_pixmap(self, i: int, r: QRectF, ratio: float) -> QPixmap:
        """Chip ``i`` (rounded box, token, id, merges) in a transparent pixmap 1 px larger on each side."""
        pix = QPixmap(QSize(int((r.width() + 2) * ratio) + 1, int((r.height() + 2) * ratio) + 1))
        pix.setDevicePixelRatio(ratio)
        pix.fill(Qt.GlobalColor.transparent)
        p = QPainter(pix)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        fm = QFontMetrics(self.font())
        small = self._small_font()
        sm = QFontMetrics(small)
        text_col = pal.color(QPalette.ColorRole.Text)
        dim = QColor(text_col)
        dim.setAlphaF(0.65)
        r = QRectF(1, 1, r.width(), r.height())
        chosen = i == self.selected
        fill = pal.color(QPalette.ColorRole.Highlight) if chosen else pal.color(QPalette.ColorRole.AlternateBase)
        p.setPen(QPen(pal.color(QPalette.ColorRole.Mid), 1))
        p.setBrush(fill)
        p.drawRoundedRect(r, 4, 4)
        fg = pal.color(QPalette.ColorRole.HighlightedText) if chosen else text_col
        p.setFont(self.font())
        p.setPen(fg)
        top = r.top() + self.PAD / 2
        p.drawText(QRectF(r.left(), top, r.width(), fm.height()), Qt.AlignmentFlag.AlignCenter,
                   shown_token(self.data.tokens[i]))
        p.setFont(small)
        p.setPen(fg if chosen else dim)
        y = top + fm.height()
        p.drawText(QRectF(r.left(), y, r.width(), sm.height()), Qt.AlignmentFlag.AlignCenter, str(self.data.ids[i]))
        if self.data.merges and self.data.merges[i]:
            p.drawText(QRectF(r.left(), y + sm.height(), r.width(), sm.height()), Qt.AlignmentFlag.AlignCenter,
                       shown_merges(self.data.merges[i]))
        p.end()
        return pix

    def index_at(self, x: float, y: float) -> int | None:
        for i, r in enumerate(self._rects):
            if r.contains(x, y):
                return i
        return None

    def mousePressEvent(self, event) -> None:
        i = self.index_at(event.position().x(), event.position().y())
        if i is not None:
            self.token_clicked.emit(i)

    def event(self, ev) -> bool:
        from PySide6.QtWidgets import QToolTip

        if ev.type() == QEvent.Type.ToolTip:
            i = self.index_at(ev.pos().x(), ev.pos().y())
            if i is not None:
                QToolTip.showText(ev.globalPos(), self._tip(i), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(ev)

    def changeEvent(self, ev) -> None:
        super().changeEvent(ev)
        if ev.type() in (QEvent.Type.FontChange, QEvent.Type.PaletteChange) and hasattr(self, "data"):
            if ev.type() == QEvent.Type.FontChange:
                self._widths = {}  # measured in the old font
                self._layout()
            self._chips = {}  # drawn in the old font or colours
            self._redraw()


def shown_token(token: str) -> str:
    """The token's display text, exactly as the views label tokens (:mod:`attnviz.text.token_display`)."""
    from attnviz.text.token_display import display_token

    return display_token(token)


def shown_merges(steps, sep: str = " ") -> str:
    """A token's merge steps as the strip shows them (a byte-level model's "Ġ+be" as "␣+be")."""
    from attnviz.text.token_display import merge_step_label

    return sep.join(merge_step_label(s) for s in steps)


class TokenStrip(QScrollArea):
    """The strip in a horizontal scroll area (long inputs scroll; the strip never wraps)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.strip = TokenStripWidget(self)
        self.setWidget(self.strip)
        self.setWidgetResizable(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.token_clicked = self.strip.token_clicked
        self._fit()

    def set_data(self, data: StripData) -> None:
        self.strip.set_data(data)
        self._fit()

    def _fit(self) -> None:
        bar = self.horizontalScrollBar().sizeHint().height()
        self.setFixedHeight(self.strip.height() + bar + 2)
