"""HeadMapView: the T×T attention matrix of one layer/head/part, with token labels and exact hovers."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLabel

from attnviz.gui.views.base import BaseView
from attnviz.gui.views.colour_scale import ScaleChooser, scale_note, scale_top
from attnviz.gui.views.heatmap_data import MAX_PX, PooledHeadCache, block_all, pool_factor, quantize
from attnviz.analysis.trace_parts import format_value, masked_cells, resolve
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["HeadMapView"]


class HeadMapView(BaseView):
    """Rows are queries, columns keys (decoder rows × encoder columns for cross-attention).

    Masked cells (−∞ before the softmax) are drawn grey and hatched, never as 0. Above
    ``MAX_PX`` tokens each pixel is the maximum of a k×k block (stated in the title); hovers and the
    colour bar's top still report exact values. Clicking a cell selects its query and key.

    Colour scale (stated on the colour bar): fixed 0–1 by default, so heads, layers and models compare
    honestly; or this head's maximum; or the largest weight of every layer and head (the model grid's).
    """

    title = "Head map"

    def _build(self) -> None:
        self.heatmap = LabelledHeatmap(self.style)
        self.figure.addItem(self.heatmap)
        self.heatmap.image.on_hover = self._hover
        self.heatmap.image.on_click = self._click
        self.heatmap.left.on_click = lambda i: self._select(query=i)
        self.heatmap.bottom.on_click = lambda i: self._select(key=i)
        self.res = None
        self.probs = None  # (H, Tq, Tk) array of the current layer, straight from the trace
        self.masked = None  # (Tq, Tk) bool at full resolution
        self.image_data: np.ndarray | None = None  # the uint8 indices on screen
        self.vmax = 1.0
        self._cache: PooledHeadCache | None = None
        self._masked_pooled = None
        self._mask_id = None
        self._pool = (1, 1)
        self._shared_max: tuple[tuple, float] | None = None  # ((trace id, part), max over layers × heads)
        self.scale_box = ScaleChooser("fixed", "one scale for all layers and heads")
        self.scale_box.follow_style(self.style.scale)
        self.scale_box.changed.connect(lambda _: self.res is not None and self._draw_head())
        self.controls.addWidget(QLabel("colours:"))
        self.controls.addWidget(self.scale_box)
        self.controls.addStretch(1)

    # -- data flow -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        self._mask_id = None
        self._load_layer()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        if changed & {"layer", "part"}:
            self._load_layer()
            return
        old_head = self.res.head if self.res else None
        self.res = resolve(self.trace, state)
        if self.res.head != old_head:
            self._draw_head()
        self._draw_marks()

    def _load_layer(self) -> None:
        if self._cache is not None:
            self._cache.cancel()
            self._cache = None
        if self.trace is None:
            self.res = self.probs = None
            self.heatmap.image.clear()
            self.heatmap.set_labels([], [])
            self.heatmap.set_mask(None)
            self.heatmap.set_title("no input yet")
            return
        self.res = r = resolve(self.trace, self.state)
        self.probs = self.trace[r.prefix + "probs"]  # (H, Tq, Tk), float16 for long inputs
        _, tq, tk = self.probs.shape
        self._pool = (pool_factor(tq, MAX_PX), pool_factor(tk, MAX_PX))
        mask = self.trace.get(r.prefix + "mask")
        if mask is None or id(mask) != self._mask_id:
            # every layer shares one mask array: pool and outline it once per trace and part
            self._mask_id = id(mask) if mask is not None else None
            self.masked = masked_cells(self.trace, r.prefix)
            self._masked_pooled = None if self.masked is None else block_all(self.masked, *self._pool)
            self.heatmap.set_mask(self.masked)
        self.heatmap.set_labels(r.query_tokens, r.key_tokens)
        self._set_grid_labels()
        if self._pool != (1, 1):
            self._cache = PooledHeadCache(self.probs, *self._pool)
        self._draw_head()
        self._draw_marks()
        if self._cache is not None:
            self._cache.prefetch(first=r.head)

    def _set_grid_labels(self) -> None:
        """Image patches: when the labels do not all fit, the first patch of each grid row (and the
        tokens before the patches, CLS) are drawn at full size; hovers name every cell."""
        grid = self.trace.grid if self.res.part == "self" else None
        major = None
        if grid is not None:
            gh, gw = grid
            n = len(self.res.query_tokens)
            prefix = n - gh * gw
            if prefix >= 0:
                major = list(range(prefix)) + [prefix + r * gw for r in range(gh)]
        self.heatmap.left.set_major(major)
        self.heatmap.bottom.set_major(major)

    def head_matrix(self) -> np.ndarray:
        """The full-resolution (Tq, Tk) probabilities of the shown head (float32)."""
        return np.asarray(self.probs[self.res.head], dtype=np.float32)

    def _draw_head(self) -> None:
        r = self.res
        data = self._cache.get(r.head) if self._cache is not None else self.probs[r.head]
        mode = self.scale_box.mode
        shared = self.shared_max() if mode == "shared" else 1.0
        self.vmax = scale_top(mode, float(data.max()) if mode == "per-map" else 1.0, shared)
        self.image_data = quantize(data, self.vmax, self._masked_pooled)
        self.heatmap.set_image(self.image_data, self.probs.shape[1:])
        note = scale_note(mode, "layers and heads") if mode != "per-map" else "scale: this head's maximum"
        self.heatmap.set_levels(0.0, self.vmax, f"attention weight · {note}")
        kr, kc = self._pool
        pooled = f" · each pixel = max of {kr}×{kc} cells" if (kr, kc) != (1, 1) else ""
        self.heatmap.set_title(f"Layer {r.layer} · head {r.head} · {r.part_name}{pooled}")

    def shared_max(self) -> float:
        """Largest weight of every layer and head of the shown part (cached per trace and part)."""
        key = (id(self.trace), self.res.part)
        if self._shared_max is None or self._shared_max[0] != key:
            top = max(float(np.max(self.trace[p])) for p in self._prob_keys())
            self._shared_max = (key, top)
        return self._shared_max[1]

    def _prob_keys(self) -> list[str]:
        from attnviz.capture.trace import layer_prefix

        return [layer_prefix(i, self.res.part) + "probs" for i in range(self.trace.layers_in(self.res.part))]

    def _draw_marks(self) -> None:
        self.heatmap.set_highlight(self.res.query, self.res.key)

    def _style_changed(self) -> None:
        self.scale_box.follow_style(self.style.scale)
        self.heatmap.set_style(self.style)
        if self.res is not None:
            self._draw_head()

    # -- interaction ---------------------------------------------------------------------------
    def cell_text(self, row: int, col: int) -> str:
        """Hover text of one cell: "query → key: exact value" (or that the cell is masked)."""
        r = self.res
        q, k = display_token(r.query_tokens[row]), display_token(r.key_tokens[col])
        head = f"{q} [{row}] → {k} [{col}]: "
        if self.masked is not None and self.masked[row, col]:
            return head + "masked (−∞ before softmax)"
        return head + format_value(self.probs[r.head, row, col])

    def _hover(self, row, col) -> None:
        text = "" if row is None or self.res is None else self.cell_text(row, col)
        self.set_hover_text(text)
        self.heatmap.image.setToolTip(text)

    def _click(self, row: int, col: int) -> None:
        self._select(query=row, key=col)

    def _select(self, **changes) -> None:
        if self.selection is not None:
            self.selection.update(**changes)
