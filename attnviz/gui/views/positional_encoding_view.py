"""PositionalEncodingView: the position encodings added to the tokens, positions × dimensions."""

from __future__ import annotations

import numpy as np

from attnviz.gui.views.base import BaseView
from attnviz.gui.views.heatmap_data import quantize
from attnviz.analysis.trace_parts import format_value
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["PositionalEncodingView"]


class PositionalEncodingView(BaseView):
    """Rows are positions (labelled with their tokens), columns the model dimensions; the colour
    scale is symmetric around 0 (−m..m, m the largest magnitude) so the sign reads honestly."""

    title = "Positional encoding"

    def _build(self) -> None:
        self.heatmap = LabelledHeatmap(self.style)
        self.heatmap.set_diverging(True)  # signed values: the colour scale is centred on 0
        self.figure.addItem(self.heatmap)
        self.heatmap.image.on_hover = self._hover
        self.heatmap.image.on_click = lambda r, c: self.selection is not None and self.selection.update(query=r)
        self.pos: np.ndarray | None = None

    def _trace_changed(self) -> None:
        self.pos = None
        if self.trace is None or "emb.pos" not in self.trace:
            self.heatmap.image.clear()
            self.heatmap.set_title("no input yet" if self.trace is None else
                                   "This model's recording has no position encodings")
            return
        self.pos = np.asarray(self.trace["emb.pos"], dtype=np.float32)  # (T, D)
        self._draw()

    def _selection_changed(self, state, changed) -> None:
        if self.pos is not None and "query" in changed:
            q = state.query if state.query is not None and state.query < len(self.pos) else None
            self.heatmap.set_highlight(q, None)

    def _style_changed(self) -> None:
        self.heatmap.set_style(self.style)
        if self.pos is not None:
            self._draw()

    def _draw(self) -> None:
        m = float(np.abs(self.pos).max())
        m = m if m > 0 else 1.0
        self.heatmap.set_image(quantize(self.pos, m, vmin=-m), self.pos.shape)
        self.heatmap.set_levels(-m, m, "value")
        T, D = self.pos.shape
        self.heatmap.set_labels([f"{i} {display_token(t)}" for i, t in enumerate(self.trace.tokens[:T])],
                                [str(d) for d in range(D)])
        kind = self.trace.meta.get("config", {}).get("pos", "")
        note = " (all zero: this model has no position encoding)" if not np.any(self.pos) else ""
        self.heatmap.set_title(f"Position encoding{f' ({kind})' if kind else ''}: position × dimension{note}")
        self._selection_changed(self.state, {"query"})

    def cell_text(self, row: int, col: int) -> str:
        return f"position {row}, dimension {col}: {format_value(self.pos[row, col])}"

    def _hover(self, row, col) -> None:
        self.set_hover_text("" if row is None or self.pos is None else self.cell_text(row, col))
