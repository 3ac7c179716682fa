"""CompareView: one head of two traces side by side on one colour scale, and their difference.

The trace it draws is a pair (:func:`attnviz.analysis.trace_compare.pair_traces`): two inputs on one model,
or one input on two models of the same shape. In the app it is given the current trace and, with
:meth:`CompareView.set_pinned`, the trace the user pinned: it pairs them (pinned first) and draws the pair
exactly as ``attnviz.compare`` and ``export --compare`` do; unlike shapes are said in the figure. The two maps share one scale (0 to the larger of their
maxima, so neither map's peak is clipped and equal colours are equal weights); the third map is second −
first on a diverging scale centred on 0 (symmetric about the largest absolute difference).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea

from attnviz.analysis.trace_compare import comparable, compared_probs, pair_traces
from attnviz.analysis.trace_parts import format_value, masked_cells, resolve
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["CompareView", "MAX_PIN_TOKENS"]

# the app pairs every layer of the pinned and the current trace (both copied whole): beyond this many tokens
# (a long document's attention is computed on demand, a block at a time) that would hold gigabytes
MAX_PIN_TOKENS = 2048
NOTHING_PINNED = ("Nothing to compare yet: pin the trace on screen with View ▸ Pin this trace for Compare "
                  "(Ctrl+P), then change the input or the model.")


class CompareView(BaseView):
    title = "Compare"

    def _build(self) -> None:
        self.maps = [LabelledHeatmap(self.style) for _ in range(3)]
        self.maps[0].bar.setVisible(False)  # one scale for both maps: the second's bar (see _arrange)
        self.maps[2].set_diverging(True)
        for i, m in enumerate(self.maps):
            m.image.on_hover = lambda r, c, i=i: self._hover(i, r, c)
        # nothing to compare: one sentence in place of the figure, not three empty maps and their empty colour
        # bars (a widget, not a figure item: the maps stay in the scene, which owns them and their menus)
        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMargin(24)
        self.arrangement: str | None = None  # "row" (three beside each other) or "column" (a narrow dock)
        # a narrow dock stacks the maps; where it is too short for 12 px row labels the figure scrolls
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.layout().replaceWidget(self.canvas, self.scroll)
        self.scroll.setWidget(self.canvas)
        self.layout().insertWidget(self.layout().indexOf(self.scroll), self.empty, 1)
        self.values: list[np.ndarray] | None = None  # first, second, second − first: (Tq, Tk) each
        self._arrange("row")
        self._show_empty(True, NOTHING_PINNED)
        self.res = None
        self.pinned = None  # the app's pinned trace, compared with the current one (set_pinned)
        self._pair = (None, None, None)  # (pinned, trace, their pair or the reason there is none)

    @property
    def stacked(self) -> bool:
        """The maps one under another (a narrow dock) rather than in a row."""
        return self.arrangement == "column"

    def _arrange(self, arrangement: str) -> None:
        """Three maps in a row; in a view narrower than 1.4 × its height (a half-window dock at 1280×720) one
        under another, each the dock's whole width: side by side there, two 12-column maps left under 13 px
        a column, too little for 12 px labels."""
        if arrangement == self.arrangement:
            return
        for m in self.maps:
            if m.scene() is not None:
                self.figure.removeItem(m)
        column = arrangement == "column"
        for i, m in enumerate(self.maps):
            self.figure.addItem(m, row=i if column else 0, col=0 if column else i)
        # the first map's bar would repeat the second's (one scale for both): it is kept but not drawn, so the
        # maps are equally wide and their cells line up, stacked or in a row (in a row without it the first map
        # took the bar's width too: 410 px against 275 for the same 10 columns)
        self.maps[0].set_style(self.style)
        self.maps[0].bar.setVisible(False)
        self.arrangement = arrangement
        self._fit_height()

    def _show_empty(self, on: bool, why: str = "") -> None:
        """On screen the sentence in place of the figure; in the figure (an export, the layout audit) the same
        sentence as its only text, without the maps' empty colour bars."""
        self.empty.setVisible(on)
        self.scroll.setVisible(not on)
        for m in self.maps[1:]:  # (the first map's bar is never drawn; the axes have no labels when empty)
            m.bar.setVisible(not on)
        if on:
            for m, title in zip(self.maps, (why, "", "")):
                m.set_title(title)

    def _fit_height(self) -> None:
        """In a column, the figure is at least tall enough for every row label at 12 px (a 16 px row) in each
        of the three maps plus its title and column labels; a shorter dock scrolls rather than shrinking them."""
        rows = self.values[0].shape[0] if self.values is not None and self.stacked else 0
        self.canvas.setMinimumHeight(3 * (16 * rows + 130) if rows else 0)  # 130: title, column labels, margins

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        arrangement = "column" if self.width() < 1.4 * self.height() else "row"
        if arrangement != self.arrangement:
            self._arrange(arrangement)
            self._draw()

    def render_figure(self, painter, rect, scale: float = 1.0) -> None:
        """As on screen, a portrait export (narrower than 1.4 × its height) stacks the maps: the arrangement
        follows the target, then the screen's comes back."""
        shown = self.arrangement
        wanted = "column" if rect.width() < 1.4 * rect.height() else "row"
        if wanted != shown:
            self._arrange(wanted)
            self._draw()
        try:
            super().render_figure(painter, rect, scale)
        finally:
            if wanted != shown:
                self._arrange(shown)
                self._draw()

    def set_pinned(self, trace) -> None:
        """Compare the current trace with ``trace`` from now on (None: nothing pinned)."""
        self.pinned = trace
        self._draw()

    def figure_trace(self):
        """The trace this view draws: the pair (what export and copy hand the renderer), or None."""
        pair = self._paired()
        return pair if not isinstance(pair, str) else None

    def _paired(self):
        """The pair to draw: the trace itself when it is one, else the pinned and the current trace paired;
        a str says why there is none; None when there is nothing to compare."""
        trace = self.trace
        if trace is None or trace.description.compare is not None:
            return trace
        if self.pinned is None:
            return None
        pinned, current, pair = self._pair
        if pinned is not self.pinned or current is not trace:  # made once per pinned/current pair
            longest = max(len(self.pinned.tokens), len(trace.tokens))
            why = (f"too long to compare in the app: {longest} tokens (up to {MAX_PIN_TOKENS})"
                   if longest > MAX_PIN_TOKENS else comparable(self.pinned, trace))
            pair = why if why else pair_traces(self.pinned, trace)
            self._pair = (self.pinned, trace, pair)
        return pair

    def _trace_changed(self) -> None:
        self._draw()

    def _selection_changed(self, state, changed) -> None:
        self._draw()

    def _style_changed(self) -> None:
        for m in self.maps:
            m.set_style(self.style)
        self.maps[0].bar.setVisible(False)  # one scale for both maps: the second's bar (see _arrange)
        self._draw()

    def _draw(self) -> None:
        trace = self._paired()
        if trace is None or isinstance(trace, str):
            self.values = None
            for m in self.maps:
                m.image.clear()
                m.set_labels([], [])
            # no trace yet with a pin: the current one is on its way (a model switch); none at all: how to pin
            why = trace or (NOTHING_PINNED if self.pinned is None
                            else "Pinned: the Compare view draws it beside the current trace once that is shown.")
            self.empty.setText(why)
            self._show_empty(True, why)
            self.set_hover_text(why if isinstance(trace, str) else "")
            return
        self.set_hover_text("")
        self._show_empty(False)
        r = self.res = resolve(trace, self.selection_state())
        first, second, diff = self.values = list(compared_probs(trace, r.layer, r.part, r.head))
        masked = masked_cells(trace, r.prefix)
        top = float(max(first.max(), second.max()))
        top = top if np.isfinite(top) and top > 0 else 1.0
        span = float(np.abs(diff).max())
        span = span if np.isfinite(span) and span > 0 else 1e-6  # equal maps: all white, a scale still drawn
        labels = (trace.description.compare or {})["labels"]
        if trace is not self.trace:  # the app's pinned and current traces: the rows name the inputs
            names = [str(t.description.model_name or "") for t in (self.pinned, self.trace)]
            labels = ["pinned", "current"] if names[0] == names[1] else [f"pinned · {names[0]}", f"current · {names[1]}"]
        other = (trace.description.compare or {}).get("other_tokens") or []
        rows = [display_token(t) for t in r.query_tokens]
        cols = [display_token(t) for t in r.key_tokens]
        if r.part == "self" and len(other) == len(rows) and list(other) != list(trace.tokens):  # two inputs
            both = [a if a == b else f"{a} | {display_token(b)}" for a, b in zip(rows, map(str, other))]
            rows, cols = both, both
        where = f"layer {r.layer} · head {r.head}" + ("" if r.part == "self" else f" · {r.part}")
        for i, (m, values, title) in enumerate(zip(self.maps, (first, second), labels)):
            m.set_image(quantize(values, top, masked), values.shape)
            m.set_levels(0.0, top, "attention weight, both maps")
            m.set_labels(rows, cols)  # every map names its rows: equal overheads, equal cells side by side
            m.set_title(f"{title} · {where}")
        d = self.maps[2]
        d.set_image(quantize(diff, span, masked, vmin=-span), diff.shape)
        d.set_levels(-span, span, "second − first")
        d.set_labels(rows, cols)
        d.set_title(f"second − first · |Δ| ≤ {float(np.abs(diff).max()):.3g}")
        self._fit_height()

    def selection_state(self):
        return self.selection.state

    def cell_text(self, which: int, row: int, col: int) -> str:
        if self.values is None:
            return ""
        r = self.res
        names = ("first", "second", "second − first")
        return (f"{names[which]}: {display_token(r.query_tokens[row])} → {display_token(r.key_tokens[col])}: "
                f"{format_value(self.values[which][row, col])}")

    def _hover(self, which: int, row, col) -> None:
        self.set_hover_text("" if row is None else self.cell_text(which, row, col))
