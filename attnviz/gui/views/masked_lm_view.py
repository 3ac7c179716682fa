"""MaskedLMView: for every [MASK] of a masked-language-model trace, where it looked and what it guessed.

One row per [MASK] (at most ``MAX_MASKS``): left, the attention of that position over the sentence in
the head whose row is most concentrated (:func:`attnviz.analysis.masked_positions.mask_rows`), the
[MASK] itself greyed; right, the model's five most probable words there with their probabilities.
Everything is read from the trace (the model's own forward pass on this input).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from attnviz.gui.style import head_colour
from attnviz.gui.views.base import BaseView
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title

__all__ = ["MaskedLMView", "MAX_MASKS"]

MAX_MASKS = 4  # rows that stay readable at 1280×720
GREY = "#9a9a9a"


class MaskedLMView(BaseView):
    title = "Masked-token prediction"
    tab_title = "[MASK]"

    def _build(self) -> None:
        self.title_item = make_title()
        self.figure.addItem(self.title_item, row=0, col=0)
        self.grid = self.figure.addLayout(row=1, col=0)
        self.notes = make_title()
        self.figure.addItem(self.notes, row=2, col=0)
        self.rows = []
        self.plots: list[tuple[pg.PlotItem, pg.PlotItem]] = []
        self.tick_pt: float | None = None  # the token labels' point size, once laid out

    def _trace_changed(self) -> None:
        from attnviz.analysis.masked_positions import mask_rows

        self.rows = mask_rows(self.trace) if self.trace is not None else []
        self._draw()

    def _style_changed(self) -> None:
        self._draw()

    def _plot(self, row: int, col: int) -> pg.PlotItem:
        plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        self.grid.addItem(plot, row=row, col=col)
        return plot

    def _draw(self) -> None:
        st = self.style
        self.grid.clear()
        self.plots = []
        if self.trace is None:
            set_title(self.title_item, self.empty_text, st)
            set_title(self.notes, "", st)
            return
        tokens = list(self.trace.tokens)
        if not self.rows:
            set_title(self.title_item, "No [MASK] in this input: type [MASK] for a word of a sentence "
                                       "(a masked-language model, e.g. masked-lm)", st)
            set_title(self.notes, "", st)
            return
        shown = self.rows[:MAX_MASKS]
        more = len(self.rows) - len(shown)
        set_title(self.title_item, f"What each [MASK] looks at, and what the model guesses there "
                                   f"({len(self.rows)} [MASK]{'s' if len(self.rows) != 1 else ''}"
                                   f"{f', first {MAX_MASKS} shown' if more else ''})", st, 1.2)
        self.grid.layout.setColumnStretchFactor(0, 2)
        self.grid.layout.setColumnStretchFactor(1, 1)
        width = max(1.0, st.line_width)
        lines = []
        for r, m in enumerate(shown):
            layer, head = m.head
            att, guess = self._plot(r, 0), self._plot(r, 1)
            self.plots.append((att, guess))
            # the tick font follows the bars' width as the dock or the presented window settles
            att.getViewBox().sigResized.connect(self._after_relayout)
            row = m.attention[layer, head]  # (T,)
            x = np.arange(len(tokens))
            brushes = [GREY if i == m.position else head_colour(head) for i in x]
            att.addItem(pg.BarGraphItem(x=x, height=row, width=0.8, brushes=brushes,
                                        pen=pg.mkPen(st.foreground, width=width * 0.5)))
            att.getAxis("bottom").setTicks([[(int(i), tokens[i]) for i in x]])
            att.setYRange(0, 1.0, padding=0.02)
            att.getAxis("left").setTicks([[(0.0, "0"), (0.5, "0.5"), (1.0, "1")]])  # rows stay short at 720 p
            att.setXRange(-0.6, len(tokens) - 0.4, padding=0)
            style_plot(att, st, bottom="", left="weight")
            att.setTitle(f"[MASK] at {m.position}: layer {layer}, head {head}", color=st.foreground,
                         size=f"{st.font_pt():.1f}pt")
            if not m.guesses:  # a classifier: where the [MASK] looks, but no word to guess
                guess.setTitle("no word predicted per position (not a masked-language model)")
                lines.append(f"[MASK] {m.position}: L{layer} H{head} looks at "
                             + ", ".join(f"“{tokens[i]}” {w:.2f}" for i, w in m.looks_at if i != m.position))
                continue
            k = len(m.guesses)
            y = np.arange(k)[::-1]  # most probable on top
            probs = np.array([p for _, p in m.guesses])
            guess.addItem(pg.BarGraphItem(x0=np.zeros(k), y=y, height=0.7, width=probs, brush=head_colour(head),
                                          pen=pg.mkPen(st.foreground, width=width * 0.5)))
            guess.getAxis("left").setTicks([[(int(yy), f"{w} {p:.0%}") for yy, (w, p) in zip(y, m.guesses)]])
            guess.setXRange(0, 1.0, padding=0.02)
            guess.setYRange(-0.6, k - 0.4, padding=0)
            style_plot(guess, st, bottom="probability" if r == len(shown) - 1 else "", left="")
            guess.getAxis("left").setWidth(int(st.metrics().horizontalAdvance("(no referent) 100%")) + 12)
            looks = ", ".join(f"“{tokens[i]}” {w:.2f}" for i, w in m.looks_at if i != m.position)
            best, p = m.guesses[0]
            lines.append(f"[MASK] {m.position}: L{layer} H{head} looks at {looks}; guess “{best}” ({p:.0%})")
        self._after_relayout()
        set_title(self.notes, "<br>".join(lines) + "<br>The head shown is the one whose row from the [MASK] puts "
                  "the most weight on one other token; grey: the [MASK] itself.", st, 1.0)

    def _after_relayout(self) -> None:
        """Token labels fit their bar: a long sentence gets a smaller tick font, never below the legible floor
        (:mod:`attnviz.gui.widgets.legible`: 12 px presented on a 1080-line screen)."""
        from PySide6.QtGui import QFont, QFontMetrics

        from attnviz.gui.widgets.legible import floor_pt

        if self.trace is None or not self.plots:
            return
        tokens = list(self.trace.tokens)
        base = QFont(self.style.font())
        floor = min(base.pointSizeF(), floor_pt(self.style, self))
        for att, _ in self.plots:
            slot = att.getViewBox().width() / max(1, len(tokens))
            if slot <= 0:
                continue
            font = QFont(base)
            widest = max(QFontMetrics(font).horizontalAdvance(t) for t in tokens) + 4
            if widest > slot:
                font.setPointSizeF(max(floor, base.pointSizeF() * slot / widest))
            att.getAxis("bottom").setTickFont(font)
            self.tick_pt = font.pointSizeF()  # the token labels' size (the layout audit reads it)

    def figure_size(self):
        from PySide6.QtCore import QSize

        return QSize(1600, 300 + 220 * max(1, min(len(self.rows), MAX_MASKS)))
