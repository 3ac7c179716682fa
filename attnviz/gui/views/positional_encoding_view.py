"""PositionalEncodingView: the model's positional table, every position it holds × every dimension.

A sinusoidal model holds PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(·) for all ``max_len``
positions; its input uses the first T of them. Showing only those T rows hides the waves (17 rows of a
64-column table look like noise), so the figure draws the whole table the trace carries
(``emb.pos_table``, the model's own buffer or learned parameter) and outlines the input's rows. Traces
written before that key existed show the input's rows only (``emb.pos``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from attnviz.analysis.trace_parts import format_value
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.views.position_notes import no_table_reason
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.token_axis import display_token
from attnviz.text.token_display import numbered_label

__all__ = ["PositionalEncodingView", "positional_table"]


def positional_table(trace) -> tuple[np.ndarray, int, bool]:
    """(table, n_input, whole): the rows the figure shows, how many of them the input uses, and whether
    ``table`` is the model's whole table (True) or only the input's rows (an older trace)."""
    n_input = len(trace["emb.pos"]) if "emb.pos" in trace else 0
    if "emb.pos_table" in trace:
        return np.asarray(trace["emb.pos_table"], dtype=np.float32), n_input, True
    return np.asarray(trace["emb.pos"], dtype=np.float32), n_input, False


class PositionalEncodingView(BaseView):
    """Rows are the model's positions (the input's rows labelled with their tokens and outlined),
    columns the model dimensions; the colour scale is symmetric around 0 (−m..m, m the largest
    magnitude) so the sign reads honestly."""

    title = "Positional encoding"

    def _build(self) -> None:
        self.heatmap = LabelledHeatmap(self.style)
        self.heatmap.set_diverging(True)  # signed values: the colour scale is centred on 0
        self.figure.addItem(self.heatmap)
        self.heatmap.image.on_hover = self._hover
        self.heatmap.image.on_click = self._clicked
        # the input's positions: a dark and a light outline, readable on every colour of the map
        self.input_marks = [QGraphicsRectItem() for _ in range(2)]
        for item in self.input_marks:
            item.setZValue(9)
            item.setVisible(False)
            self.heatmap.vb.addItem(item, ignoreBounds=True)
        self.pos: np.ndarray | None = None
        self.n_input = 0
        self.whole = False

    def _trace_changed(self) -> None:
        self.pos = None
        if self.trace is None or "emb.pos" not in self.trace:
            self.heatmap.image.clear()
            self.heatmap.set_labels([], [])
            self.heatmap.bar.setVisible(False)  # a 0–1 bar beside no map read as a scale of something shown
            for item in self.input_marks:
                item.setVisible(False)
            self.heatmap.set_title(self.empty_text if self.trace is None else
                                   no_table_reason(self.trace, "encodings"))
            return
        self.pos, self.n_input, self.whole = positional_table(self.trace)  # (max_len or T, D)
        self._draw()

    def _clicked(self, row: int, _col: int) -> None:
        if self.selection is not None and row < self.n_input:  # only the input's positions are tokens
            self.selection.update(query=row)

    def _selection_changed(self, state, changed) -> None:
        if self.pos is not None and "query" in changed:
            q = state.query if state.query is not None and state.query < self.n_input else None
            self.heatmap.set_highlight(q, None)

    def _style_changed(self) -> None:
        self.heatmap.set_style(self.style)
        self._style_marks()
        if self.pos is not None:
            self._draw()

    def _style_marks(self) -> None:
        w = 1.5 * self.style.line_width
        for item, colour, width in zip(self.input_marks, ("#000000", self.style.highlight), (w + 2, w)):
            pen = QPen(QColor(colour), width)
            pen.setCosmetic(True)
            item.setPen(pen)

    def _draw(self) -> None:
        m = float(np.abs(self.pos).max())
        m = m if m > 0 else 1.0
        self.heatmap.bar.setVisible(True)  # hidden while a model without a table was shown
        self.heatmap.set_image(quantize(self.pos, m, vmin=-m), self.pos.shape)
        # what the table is: a learned table is not sin / cos (a model of unknown kind says neither)
        kind = {"sinusoidal": " (sin / cos)", "learned": " (learned)"}.get(
            self.trace.description.config.get("pos"), "")
        self.heatmap.set_levels(-m, m, f"PE value{kind} · blue −, white 0, red +")
        n, D = self.pos.shape
        tokens = list(self.trace.tokens)
        rows = [numbered_label(i, tokens[i]) if i < min(self.n_input, len(tokens)) else str(i) for i in range(n)]
        self.heatmap.set_labels(rows, [str(d) for d in range(D)])
        # a long table: every 8th position at full size rather than 128 labels too small to read
        self.heatmap.left.set_major(range(0, n, 8) if n > 32 else None)
        self.heatmap.bottom.set_major(range(0, D, 4) if D > 32 else None)
        self._style_marks()
        outline = self.whole and 0 < self.n_input < n
        for item in self.input_marks:
            item.setRect(QRectF(0, 0, D, self.n_input))
            item.setVisible(outline)
        kind = self.trace.description.config.get("pos", "")
        what = f"{kind.capitalize()} positional encoding" if kind and kind != "none" else "Positional encoding"
        if not np.any(self.pos):
            note = ": all zero (this model has no position encoding)"
        elif self.whole:
            last = self.n_input - 1
            note = (f": {n} positions × {D} dimensions (rows: position, columns: dimension), the input's 0–{last} "
                    "outlined" if self.n_input < n else
                    f": {n} positions × {D} dimensions (rows: position, columns: dimension), all used by the input")
            if "emb.pos" in self.trace and self.n_input and not np.any(self.trace["emb.pos"]):
                note += "; switched off in this run"
        else:
            note = f": the input's {n} positions × {D} dimensions"
        self.heatmap.set_title(what + note)
        self._selection_changed(self.state, {"query"})

    def cell_text(self, row: int, col: int) -> str:
        tokens = list(self.trace.tokens) if self.trace is not None else []
        where = f" (“{display_token(tokens[row])}”)" if row < min(self.n_input, len(tokens)) else \
            " (not used by this input)"
        return f"position {row}{where}, dimension {col}: {format_value(self.pos[row, col])}"

    def _hover(self, row, col) -> None:
        self.set_hover_text("" if row is None or self.pos is None else self.cell_text(row, col))
