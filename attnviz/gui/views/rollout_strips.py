"""The Rollout view's text body: one token strip per map, showing as many positions around the query as fit.

Every strip wraps its token boxes to the figure's width, so its height grows with the input; three strips of 300
tokens ran off a 1280×720 export and at 2,000 tokens the figure showed only its title. :meth:`RolloutStrips.fit`
therefore picks the largest window of positions around the query (``analysis.rollout_window``) whose three strips fit
the height the figure gives them, measured with the strips' own layout; the caption names the window.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QSizePolicy

from attnviz.analysis.rollout_window import MAX_WINDOW, MIN_WINDOW, strip_window, window_caption
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.widgets.value_token_row import TokenStripItem

__all__ = ["RolloutStrips"]


class RolloutStrips:
    """``body`` (a GraphicsLayout) holds ``strips[name]``; indices given to the callbacks are input positions."""

    def __init__(self, style, names: dict[str, str], on_hover: Callable, on_click: Callable):
        self.style = style
        self.names = names
        self.body = pg.GraphicsLayout()
        self.strips: dict[str, TokenStripItem] = {}
        for row, name in enumerate(names):
            strip = TokenStripItem(style, names[name])
            strip.on_hover = lambda i, n=name: on_hover(n, None if i is None else i + self.lo)
            strip.on_click = lambda i: on_click(i + self.lo)
            self.body.addItem(strip, row=row + 1, col=0)
            self.strips[name] = strip
        # empty widgets that can grow take the spare height above and below the strips, so on a slide the
        # strips sit in the middle rather than leaving the bottom half blank (an empty label could not
        # grow, and the strips drifted apart once the figure had been laid out at a new size)
        for row in (0, len(names) + 1):
            spare = pg.GraphicsWidget()
            spare.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
            self.body.addItem(spare, row=row, col=0)
            self.body.layout.setRowStretchFactor(row, 1)
        self.set_style(style)
        self.tokens: list[str] = []
        self.maps: dict[str, np.ndarray | None] = {}
        self.notes: dict[str, str] = {}
        self.tops: dict[str, float] = {}
        self.query = 0
        self.masked: np.ndarray | None = None  # (T,) keys hidden from the query by the causal mask, or None
        self.window = MAX_WINDOW  # how many positions the strips show (fit() sets it from the figure's height)
        self.lo, self.hi = 0, 0

    def set_style(self, style) -> None:
        self.style = style
        self.body.layout.setVerticalSpacing(style.metrics().height())  # apart, as separate rows
        for strip in self.strips.values():
            strip.set_style(style)

    def set_maps(self, tokens, maps, notes, tops, query: int, masked: np.ndarray | None = None) -> None:
        """The whole rows (shares over every key); drawn in the current window. ``masked``: keys the query cannot
        see (hatched)."""
        self.tokens, self.maps, self.notes, self.tops, self.query = list(tokens), maps, notes, tops, int(query)
        self.masked = masked
        self._draw()

    def is_masked(self, i: int) -> bool:
        return self.masked is not None and 0 <= i < len(self.masked) and bool(self.masked[i])

    def caption(self) -> str:
        """What the strips leave out ("" when they show every position), and what the hatching means."""
        lines = [window_caption(self.lo, self.hi, len(self.tokens), self.maps, self.names, self.tokens)]
        if self.masked is not None and self.masked[self.lo:self.hi].any():
            lines.append("hatched: masked (after the query, which the causal mask hides from it), not a 0 share")
        return "<br>".join(line for line in lines if line)

    def _draw(self) -> None:
        self.lo, self.hi = strip_window(len(self.tokens), self.query, self.window)
        lo, hi = self.lo, self.hi
        for name, strip in self.strips.items():
            values = self.maps.get(name)
            if values is None:
                strip.set_values([], [], [], message=self.notes.get(name, ""))
                continue
            strip.set_values(self.tokens[lo:hi], values[lo:hi], quantize(values, self.tops[name])[lo:hi],
                             marked=self.query - lo, masked=None if self.masked is None else self.masked[lo:hi])

    def _needed(self) -> float:
        gaps = self.body.layout.verticalSpacing() * (len(self.strips) + 1)
        return sum(s.preferredHeight() for s in self.strips.values()) + gaps

    def fit(self, height: float) -> bool:
        """Show the most positions (≤ MAX_WINDOW) whose strips fit ``height`` px; True when the window changed."""
        n = len(self.tokens)
        if not n or height <= 0:
            return False
        before = self.window
        for strip in self.strips.values():  # the window is chosen at the strips' natural heights
            strip.set_fill(None)
        lo, hi = MIN_WINDOW, min(n, MAX_WINDOW)
        self.window = hi
        self._draw()
        if self._needed() > height:  # bisect: the strips' height grows with the positions they show
            while hi - lo > 1:
                self.window = (lo + hi) // 2
                self._draw()
                lo, hi = (self.window, hi) if self._needed() <= height else (lo, self.window)
            self.window = lo
            self._draw()
        self._fill(height)
        return self.window != before

    def _fill(self, height: float) -> None:
        """The height left over shared by the strips that draw tokens (larger text, taller cells): on a slide the
        strips had sat in a band across the middle, half the page blank."""
        spare = height - self._needed()
        drawing = [s for s in self.strips.values() if s.tokens and not s.message]
        if spare <= 0 or not drawing:
            return
        share = spare / len(drawing)
        for strip in drawing:
            strip.set_fill(strip.preferredHeight() + share)

    def height_used(self) -> float:
        """The strips' height with the gaps between them (not above and below): the colour bar's height."""
        shown = list(self.strips.values())
        return sum(s.preferredHeight() for s in shown) + self.body.layout.verticalSpacing() * (len(shown) - 1)

    def fit_figure(self, figure, title_item, room, set_title: Callable[[], None], bar=None) -> None:
        """Fit the strips under the title of ``figure`` laid out in ``room``; ``set_title`` writes the title (with
        :meth:`caption`) before (its window line takes height) and after the fit; ``bar``, their colour bar, made as
        tall as the strips (20 lines stood beside three strips grown to fill a slide)."""
        set_title()
        figure.setGeometry(room)
        figure.layout.activate()
        height = room.height() - title_item.geometry().bottom() - 2 * self.style.metrics().height()
        if self.fit(height):
            set_title()
        if bar is not None:
            bar.setMaximumHeight(max(self.height_used(), 8 * self.style.metrics().height()))
        figure.setGeometry(room)  # the layout grew the figure to what the strips asked before the fit
        figure.layout.invalidate()
        figure.layout.activate()
