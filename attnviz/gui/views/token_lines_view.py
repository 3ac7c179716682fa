"""TokenLinesView: BertViz's head view — query tokens left, key tokens right, lines weighted by attention.

Each shown head draws its lines in its own colour-blind-safe colour with opacity = weight. Hovering a
token keeps only its lines; clicking a left token selects it as the query (click again to clear).
Cross-attention shows decoder tokens on the left and encoder tokens on the right.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPen, QPixmap
from PySide6.QtWidgets import QCheckBox, QToolButton

from attnviz.gui.style import ViewStyle, head_colour
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.trace_parts import format_value, resolve
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["TokenLinesView", "TokenLinesItem"]

MAX_TOKENS = 200  # beyond this the lines are an unreadable solid block
MIN_WEIGHT = 1.0 / 255  # lines fainter than one alpha step are not drawn
ALPHA_STEPS = 32  # lines are batched by quantised opacity: one drawLines call per (head, step)


class TokenLinesItem(pg.GraphicsWidget):
    """The two token columns and the lines between them, laid out to the item's current size."""

    def __init__(self, style: ViewStyle):
        super().__init__()
        self.style = style
        self.left: list[str] = []
        self.right: list[str] = []
        self.weights: np.ndarray | None = None  # (H, Tq, Tk)
        self.heads: list[int] = []
        self.hover: tuple[str, int] | None = None
        self.selected: int | None = None  # the selected query (left token)
        self.on_hover = self.on_click = None
        self.setAcceptHoverEvents(True)

    def set_data(self, left, right, weights) -> None:
        self.left, self.right = [display_token(t) for t in left], [display_token(t) for t in right]
        self.weights = weights
        self.update()

    @property
    def focus(self) -> tuple[str, int] | None:
        """The token whose lines alone are drawn: the hovered one, else the selected query."""
        if self.hover is not None:
            return self.hover
        return ("left", self.selected) if self.selected is not None else None

    # -- geometry ------------------------------------------------------------------------------
    def _geometry(self):
        fm = self.style.metrics()
        r = self.boundingRect()
        text_w = max([fm.horizontalAdvance(t) for t in self.left + self.right + ["query", "key"]] + [40.0])
        text_w = min(text_w, r.width() * 0.25)
        gap = float(np.clip(r.width() - 2 * text_w - 40, 80, 420 * self.style.font_scale))
        x0 = (r.width() - 2 * text_w - gap) / 2
        lx, rx = x0 + text_w, x0 + text_w + gap
        top = fm.height() * 2.2
        avail = max(r.height() - top - 4, 10)
        n = max(len(self.left), len(self.right), 1)
        step = min(avail / n, fm.height() * 2.2)
        return lx, rx, text_w, top, step

    def token_at(self, pos: QPointF) -> tuple[str, int] | None:
        """Which token (side, index) is at ``pos`` (item coordinates), if any."""
        lx, rx, text_w, top, step = self._geometry()
        i = int((pos.y() - top) // step)
        if lx - text_w - 4 <= pos.x() <= lx + 6 and 0 <= i < len(self.left):
            return "left", i
        if rx - 6 <= pos.x() <= rx + text_w + 4 and 0 <= i < len(self.right):
            return "right", i
        return None

    # -- drawing -------------------------------------------------------------------------------
    def visible_lines(self, head: int) -> np.ndarray:
        """(N, 3) rows of (query, key, weight) this head draws now (focus and threshold applied)."""
        w = self.weights[head]
        mask = w >= MIN_WEIGHT
        focus = self.focus
        if focus is not None:
            side, idx = focus
            keep = np.zeros_like(mask)
            if side == "left":
                keep[idx, :] = True
            else:
                keep[:, idx] = True
            mask &= keep
        q, k = np.nonzero(mask)
        return np.stack([q, k, w[q, k]], axis=1) if len(q) else np.zeros((0, 3))

    def paint(self, p, *args):
        st = self.style
        fm = st.metrics()
        lx, rx, text_w, top, step = self._geometry()
        fg = QColor(st.foreground)
        p.setRenderHint(p.RenderHint.Antialiasing, True)
        p.setFont(st.font(0.9))
        p.setPen(QPen(fg))
        p.drawText(QRectF(lx - text_w, 0, text_w, fm.height() * 1.6), int(Qt.AlignRight | Qt.AlignVCenter), "query")
        p.drawText(QRectF(rx, 0, text_w, fm.height() * 1.6), int(Qt.AlignLeft | Qt.AlignVCenter), "key")
        if self.weights is not None:
            width = 2.0 * st.line_width
            for h in self.heads:
                base = QColor(head_colour(h))
                rows = self.visible_lines(h)
                if not len(rows):
                    continue
                steps = np.minimum((rows[:, 2] * ALPHA_STEPS).astype(int), ALPHA_STEPS - 1)
                for s in np.unique(steps):
                    sel = rows[steps == s]
                    c = QColor(base)
                    c.setAlphaF(min(1.0, (s + 0.5) / ALPHA_STEPS))
                    p.setPen(QPen(c, width))
                    p.drawLines([QLineF(lx + 4, top + (q + 0.5) * step, rx - 4, top + (k + 0.5) * step)
                                 for q, k, _ in sel])
        focus = self.focus
        for side, tokens, x, align in (("left", self.left, lx - text_w, Qt.AlignRight),
                                       ("right", self.right, rx, Qt.AlignLeft)):
            stride = max(1, int(np.ceil(fm.height() * 0.95 / step)))
            for i, tok in enumerate(tokens):
                is_focus = focus == (side, i)
                if i % stride and not is_focus:
                    continue
                rect = QRectF(x, top + i * step, text_w, step)
                if is_focus:
                    hl = QColor(fg)
                    hl.setAlpha(40)
                    p.fillRect(rect, hl)
                p.setFont(st.font(bold=is_focus))
                p.setPen(QPen(fg))
                p.drawText(rect, int(align | Qt.AlignVCenter), fm.elidedText(tok, Qt.ElideRight, text_w))

    # -- interaction ---------------------------------------------------------------------------
    def hoverEvent(self, ev):
        hit = None if ev.isExit() else self.token_at(ev.pos())
        if hit != self.hover:
            self.hover = hit
            self.update()
            if self.on_hover is not None:
                self.on_hover(hit)

    def mouseClickEvent(self, ev):
        hit = self.token_at(ev.pos())
        if ev.button() == Qt.LeftButton and hit is not None and self.on_click is not None:
            ev.accept()
            self.on_click(*hit)


class TokenLinesView(BaseView):
    """BertViz-style head view of the selected layer; heads are toggled with coloured check boxes."""

    title = "Token lines"

    def _build(self) -> None:
        self.title_item = make_title()
        self.lines = TokenLinesItem(self.style)
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.lines, row=1, col=0)
        self.lines.on_hover = self._hover
        self.lines.on_click = self._click
        self.head_boxes: list[QCheckBox] = []
        self.all_button = QToolButton(text="All heads")
        self.all_button.clicked.connect(lambda: self.set_heads(range(len(self.head_boxes))))
        self.controls.addWidget(self.all_button)
        self.controls.addStretch(1)
        self.res = None
        self._cut = ""

    # -- heads ---------------------------------------------------------------------------------
    @property
    def shown_heads(self) -> list[int]:
        return [h for h, b in enumerate(self.head_boxes) if b.isChecked()]

    def set_heads(self, heads) -> None:
        """Show exactly these heads."""
        heads = set(heads)
        for h, box in enumerate(self.head_boxes):
            box.blockSignals(True)
            box.setChecked(h in heads)
            box.blockSignals(False)
        self._redraw()

    def _make_head_boxes(self, n: int) -> None:
        if len(self.head_boxes) == n:
            return
        for box in self.head_boxes:
            self.controls.removeWidget(box)
            box.deleteLater()
        self.head_boxes = []
        for h in range(n):
            pm = QPixmap(12, 12)
            pm.fill(QColor(head_colour(h)))
            box = QCheckBox(f"H{h}")
            box.setIcon(QIcon(pm))
            box.toggled.connect(self._redraw)
            self.controls.insertWidget(h, box)
            box.show()  # added after the view was shown: Qt would show it only on the next event pass
            self.head_boxes.append(box)

    # -- data flow -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        if self.trace is None:
            self.lines.set_data([], [], None)
            set_title(self.title_item, "no trace", self.style)
            return
        self._make_head_boxes(self.trace.n_heads)
        self.res = resolve(self.trace, self.state)
        if not self.shown_heads:
            self.set_heads([self.res.head])
        self._load()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        old = self.res
        self.res = resolve(self.trace, state)
        if old is not None and self.res.head != old.head and self.shown_heads == [old.head]:
            self.set_heads([self.res.head])  # one head shown: follow the selection
        if changed & {"layer", "part"}:
            self._load()
        self.lines.selected = self.res.query
        self.lines.update()

    def _load(self) -> None:
        r = self.res
        probs = self.trace[r.prefix + "probs"]  # (H, Tq, Tk)
        n_q, n_k = min(probs.shape[1], MAX_TOKENS), min(probs.shape[2], MAX_TOKENS)
        weights = np.asarray(probs[:, :n_q, :n_k], dtype=np.float32)
        self.lines.set_data(r.query_tokens[:n_q], r.key_tokens[:n_k], weights)
        self.lines.selected = r.query if r.query is not None and r.query < n_q else None
        cut = f" · first {MAX_TOKENS} tokens" if max(probs.shape[1:]) > MAX_TOKENS else ""
        self._cut = cut
        self._redraw()

    def _redraw(self, *args) -> None:
        self.lines.heads = self.shown_heads
        self.lines.update()
        if self.res is not None:
            heads = ", ".join(str(h) for h in self.lines.heads) or "none"
            set_title(self.title_item, f"Layer {self.res.layer} · heads {heads} · {self.res.part_name}"
                      f" · opacity = attention weight{self._cut}", self.style)

    def _style_changed(self) -> None:
        self.lines.style = self.style
        self._redraw()

    # -- interaction ---------------------------------------------------------------------------
    def token_text(self, side: str, index: int) -> str:
        """Status text for a hovered token: its strongest links in the shown heads."""
        tokens = self.lines.left if side == "left" else self.lines.right
        parts = []
        for h in self.lines.heads:
            w = self.lines.weights[h]
            row = w[index] if side == "left" else w[:, index]
            j = int(np.argmax(row))
            other = (self.lines.right if side == "left" else self.lines.left)[j]
            parts.append(f"H{h}: {other} [{j}] {format_value(row[j])}")
        arrow = "→ strongest key" if side == "left" else "← strongest query"
        return f"{tokens[index]} [{index}] {arrow}: " + "; ".join(parts)

    def _hover(self, hit) -> None:
        self.set_hover_text("" if hit is None or not self.lines.heads else self.token_text(*hit))

    def _click(self, side: str, index: int) -> None:
        if self.selection is None:
            return
        if side == "left":
            self.selection.update(query=None if self.selection.query == index else index)
        else:
            self.selection.update(key=None if self.selection.key == index else index)
