"""PositionSimilarityView: cosine similarity of position embeddings (the ViT paper's figure 7, centre).

Vision transformers: one small map per patch, placed on the patch grid — tile (r, c) shows how
similar patch (r, c)'s position embedding is to every other patch's. Text: the (T, T) matrix.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis import patch_position_similarity, positional_similarity
from attnviz.errors import AttnvizError
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.views.position_notes import no_table_reason
from attnviz.analysis.trace_parts import format_value
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.text.token_display import numbered_labels

__all__ = ["PositionSimilarityView"]

GAP = 1  # cells of separator between the small maps (drawn in the masked colour)


class PositionSimilarityView(BaseView):
    title = "Position similarity"

    def _build(self) -> None:
        self.heatmap = LabelledHeatmap(self.style, lock_aspect=True, centred=True)  # the bar beside the matrix
        self.heatmap.set_diverging(True)  # signed: −1 (opposite) … 0 (unrelated) … 1 (same), white at 0
        self.figure.addItem(self.heatmap)
        self.heatmap.image.on_hover = self._hover
        self.similarity: np.ndarray | None = None  # (gh, gw, gh, gw) or (T, T)
        self.grid = None

    def _trace_changed(self) -> None:
        self.similarity = None
        if self.trace is None or "emb.pos" not in self.trace:
            self._blank()
            self.heatmap.set_title(self.empty_text if self.trace is None else
                                   no_table_reason(self.trace, "embeddings"))
            return
        pos = np.asarray(self.trace["emb.pos"], dtype=np.float64)  # (T, D)
        self.grid = self.trace.grid
        if not np.any(pos):  # cosine similarity of zero vectors is undefined, not 0: nothing to draw
            self._blank()
            self.heatmap.set_title("This model has no position encoding (all zero): there is no similarity "
                                   "between positions to show")
            return
        try:
            if self.grid is not None:
                self.similarity = patch_position_similarity(pos, self.grid)
            else:
                self.similarity = positional_similarity(pos)
        except AttnvizError as exc:
            self.heatmap.set_title(str(exc))
            return
        self._draw()

    def _blank(self) -> None:
        """No map, no colour bar and no labels of another input: only the title says why."""
        self.heatmap.image.clear()
        self.heatmap.set_labels([], [])
        self.heatmap.bar.setVisible(False)

    def _style_changed(self) -> None:
        self.heatmap.set_style(self.style)
        if self.similarity is not None:
            self._draw()

    def mosaic(self) -> np.ndarray:
        """The image drawn: (T, T) for text, or the small maps on the grid with NaN separators."""
        if self.grid is None:
            return self.similarity
        gh, gw = self.grid
        out = np.full((gh * (gh + GAP) - GAP, gw * (gw + GAP) - GAP), np.nan)
        for r in range(gh):
            for c in range(gw):
                out[r * (gh + GAP): r * (gh + GAP) + gh, c * (gw + GAP): c * (gw + GAP) + gw] = self.similarity[r, c]
        return out

    def _draw(self) -> None:
        img = self.mosaic()
        gaps = np.isnan(img)
        self.heatmap.bar.setVisible(True)
        self.heatmap.set_image(quantize(np.nan_to_num(img), 1.0, gaps, vmin=-1.0), img.shape)
        self.heatmap.set_levels(-1.0, 1.0, "cosine similarity")
        if self.grid is None:
            tokens = self.trace.tokens
            labels = numbered_labels(tokens)
            self.heatmap.set_labels(labels, [str(i) for i in range(len(tokens))])
            self.heatmap.set_title("Cosine similarity of the position encodings (position × position)")
            return
        gh, gw = self.grid
        self.heatmap.left.set_labels([f"row {r}" for r in range(gh)], [r * (gh + GAP) + gh / 2 for r in range(gh)])
        self.heatmap.bottom.set_labels([f"col {c}" for c in range(gw)], [c * (gw + GAP) + gw / 2 for c in range(gw)])
        self.heatmap.set_title("Position-embedding similarity: tile (row, col) compares that patch with every patch")

    def cell_text(self, row: int, col: int) -> str:
        """Hover text for one cell of the drawn image ('' on a separator)."""
        if self.grid is None:
            return f"position {row} vs {col}: {format_value(self.similarity[row, col])}"
        gh, gw = self.grid
        (r, kr), (c, kc) = divmod(row, gh + GAP), divmod(col, gw + GAP)
        if kr >= gh or kc >= gw:
            return ""
        return f"patch {r},{c} vs patch {kr},{kc}: {format_value(self.similarity[r, c, kr, kc])}"

    def _hover(self, row, col) -> None:
        self.set_hover_text("" if row is None or self.similarity is None else self.cell_text(row, col))
