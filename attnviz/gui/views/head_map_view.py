"""HeadMapView: the T×T attention matrix of one layer/head/part, with token labels and exact hovers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from attnviz.gui.views.base import BaseView
from attnviz.gui.views.colour_scale import ScaleChooser, scale_note, scale_top
from attnviz.gui.views.crop_mask import CropHatch
from attnviz.gui.views.head_map_on_demand import OnDemandHeadMap
from attnviz.gui.views.head_map_preview import RUNNING_NEW_INPUT, computed_for, draw_full_preview, long_selection, running_suffix
from attnviz.gui.views.head_pyramids import HeadPyramids
from attnviz.gui.views.heatmap_data import MAX_PX, pooled_phrase, quantize
from attnviz.analysis.decoder_positions import end_row
from attnviz.analysis.trace_parts import format_value, masked_cells, resolve
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.token_axis import display_token
from attnviz.text.token_display import axis_labels

if TYPE_CHECKING:
    from attnviz.gui.views.on_demand_map import OnDemandMap

__all__ = ["HeadMapView"]


class HeadMapView(BaseView):
    """Rows are queries, columns keys (decoder rows × encoder columns for cross-attention).

    Masked cells (−∞ before the softmax) are drawn grey and hatched, never as 0. Above ``MAX_PX``
    tokens the map is drawn from a max-pooled level-of-detail pyramid: on every pan, zoom or resize
    the view shows the crop of the finest level with at most one value per screen pixel, so each
    drawn cell is the maximum of a 2^ℓ×2^ℓ block (stated in the title and on the colour bar) and
    full zoom shows the exact values; hovers and the colour bar's top always report exact values.
    Clicking a cell selects its query and key.

    A long map whose probabilities the trace recomputes on demand (not held as an array) is never asked
    for whole: the view's :class:`OnDemandHeadMap` (``long``) fills a max-pooled overview band by band and
    computes the visible tiles at the zoomed resolution on the lanes; the hover asks the trace for its one cell.

    Colour scale (stated on the colour bar): fixed 0–1 by default, so heads, layers and models compare
    honestly; or this head's maximum; or the largest weight of every layer and head (the model grid's).
    """

    title = "Head map"

    def _build(self) -> None:
        # a long map the trace does not hold, asked for in blocks (its overview, tiles, lanes and redraws)
        self.long = OnDemandHeadMap(self, self._redraw_arrived)
        self.heatmap = LabelledHeatmap(self.style, max_cell_aspect=1.0)  # square cells (F5 drew them 1.8 : 1)
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
        self._pyramids: HeadPyramids | None = None  # long maps only (above MAX_PX tokens)
        self.tile = None  # the PyramidView on screen (long maps): its level and the data cells it covers
        self._rendering = False
        self._labelled = None  # (top, bar label, title) drawn last
        self._mask_id = None
        self._hatch = CropHatch(self.heatmap)  # a long map's masked cells in the crop on screen
        self._shared_max: tuple[tuple, float] | None = None  # ((trace id, part), max over layers × heads)
        self.preview = None  # the LayerPreview on screen while a forward runs (None: the trace is shown)
        self._runs = 0  # runs started; a new input's mark goes up only if no map of it came meanwhile
        self._running = ""  # the title's note that the map on screen is the previous input's
        self.scale_box = ScaleChooser("fixed", "one scale for all layers and heads")
        self.scale_box.follow_style(self.style.scale)
        self.scale_box.changed.connect(lambda _: self.res is not None and self._draw_head())
        self.heatmap.vb.sigRangeChanged.connect(self._viewport_changed)
        self.heatmap.vb.sigResized.connect(self._viewport_changed)
        self.controls.addWidget(QLabel("colours:"))
        self.controls.addWidget(self.scale_box)
        self.controls.addStretch(1)

    @property
    def on_demand(self) -> OnDemandMap | None:
        """The long map on screen asked for in blocks (None for a map the trace holds): ``long.map``. Scripts and
        the bench may set one whose overview they filled (its tiles are then asked as the view's own)."""
        return self.long.map

    @on_demand.setter
    def on_demand(self, od: OnDemandMap | None) -> None:
        self.long.map = od

    # -- data flow -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        handed, self._mask_id, self.preview, self._running = self.long.handed(self.preview, self.trace), None, None, ""
        self._runs += 1  # a mark asked for before this trace came is not of the map now shown
        self._load_layer(handed)  # a long preview's map on screen may be of this trace's very numbers

    def show_preview(self, preview, head: int) -> None:
        """Draw one head of a layer the running forward has computed (a ``LayerPreview``), titled as such,
        until the full trace arrives; any change of selection goes back to the trace. A long layer (q, k, lse)
        is drawn as a long trace's map is: overview pooled on the views' lane, tiles on zoom, exact hovers."""
        if self._pyramids is not None:
            self._pyramids.cancel()
            self._pyramids = None
        self.long.drop()
        self._runs += 1
        self.preview, self.tile, self.res, self._running = preview, None, None, ""
        head = min(max(int(head), 0), preview.shape[0] - 1)
        # the layer's own mask (drawn grey, never as 0); the full trace's is set again when it arrives
        self._mask_id, self.masked, self._labelled = None, preview.masked, None
        self.heatmap.set_mask(self.masked)
        self._hatch.forget()
        self.heatmap.set_veiled_row(None)
        self.heatmap.left.set_major(None)
        self.heatmap.bottom.set_major(None)
        if preview.probs is not None:
            draw_full_preview(self, preview, head)
            return
        from attnviz.capture.preview import PreviewMaps  # numpy only; imported when a long preview comes
        self.res = long_selection(preview, head)
        self.heatmap.set_labels(self.res.query_tokens, self.res.key_tokens)
        self.long.start(PreviewMaps(preview), preview.layer, "self", head)
        self._draw_head()
        self.heatmap.set_highlight(None, None)

    def drop_preview(self) -> None:
        """A new run started: the last run's layer preview is not of this input. If no map of the new input
        comes soon (a long forward), the title says the map on screen is the previous input's."""
        if self.preview is not None:
            self.preview = None
            self._load_layer()
        self._runs += 1
        run = self._runs
        # not at once: a short input's trace comes within a keystroke's time and the title would flicker
        QTimer.singleShot(400, self, lambda: self.mark_running(run))

    def mark_running(self, run: int | None = None, note: str = RUNNING_NEW_INPUT) -> None:
        """Say over the map on screen that it is the previous input's (``run``: only if no map came since;
        ``note`` "": the run ended without a map, the mark goes and a pending one never comes)."""
        self._runs += 0 if note else 1
        if (run is not None and run != self._runs) or self.res is None or self.preview is not None:
            return
        self._running, self._labelled = note, None
        self._label(0) if self._pyramids is None and self.on_demand is None else self._draw_tile()

    def _selection_changed(self, state, changed) -> None:
        if self.preview is not None:  # the preview names one layer and head: anything else is the trace's,
            self.preview, self._running = None, RUNNING_NEW_INPUT  # the last input's while the forward runs
            self._load_layer()
            return
        if self.trace is None:
            return
        if changed & {"layer", "part"}:
            self._load_layer()
            return
        old_head = self.res.head if self.res else None
        self.res = resolve(self.trace, state)
        if self.on_demand is not None and self.res.head != old_head:
            self.long.start(self.trace, self.res.layer, self.res.part, self.res.head)
        if self.res.head != old_head:
            self._draw_head()
        self._draw_marks()

    def _load_layer(self, handed=(None, None)) -> None:
        previous = self._pyramids
        if previous is not None:
            previous.cancel()
            self._pyramids = None
        self.long.drop()
        self.tile = None
        if self.trace is None:
            self.res = self.probs = None
            self.heatmap.image.clear()
            self.heatmap.set_labels([], [])
            self.heatmap.set_mask(None)
            self.heatmap.set_veiled_row(None)
            self.heatmap.hide_scale()
            self.heatmap.set_highlight(None)  # nor the last map's boxed row, an empty frame
            self.heatmap.set_title("no input yet")
            # the title and bar no longer show what _labelled remembers: the next map must set them,
            # even when it is the same layer, head and scale as the map before the clear
            self._labelled = None
            return
        self.res = r = resolve(self.trace, self.state)
        _, tq, tk = self.trace.probs_shape(r.layer, r.part)
        if max(tq, tk) > MAX_PX and r.prefix + "probs" not in self.trace.arrays:
            self._load_long(computed_for(*handed, self.trace, r.layer, r.part, r.head))  # never the whole T×T
            return
        self.probs = self.trace[r.prefix + "probs"]  # (H, Tq, Tk), float16 for long inputs
        mask = self.trace.get(r.prefix + "mask")
        if mask is None or id(mask) != self._mask_id:
            # every layer shares one mask array: outline it once per trace and part
            self._mask_id = id(mask) if mask is not None else None
            self.masked = masked_cells(self.trace, r.prefix)
            self.heatmap.set_mask(self.masked)
        self.heatmap.set_labels(*axis_labels(r, max(tq, tk) > MAX_PX))
        self._set_grid_labels()
        if max(tq, tk) > MAX_PX:
            self._pyramids = HeadPyramids(self.probs, self.masked, like=previous)
        self._draw_head()
        # the decoder's last position wrote nothing: its cross-attention row is washed out, not an alignment
        self.heatmap.set_veiled_row(end_row(self.trace, r.part))
        self._draw_marks()
        if self._pyramids is not None:
            self._pyramids.prefetch(first=r.head)

    def _load_long(self, computed=None) -> None:
        """A long map the trace recomputes in blocks: its overview fills (from ``computed``'s, the same numbers)."""
        r = self.res
        self.probs, self.masked, self._mask_id = None, None, None
        self.heatmap.set_mask(None)  # a long map's masked cells are its exact zeros, hatched per crop
        self._hatch.forget()
        self.heatmap.set_labels(*axis_labels(r, True))
        self._set_grid_labels()
        self.long.start(self.trace, r.layer, r.part, r.head, computed)
        self._draw_head()
        self.heatmap.set_veiled_row(end_row(self.trace, r.part))
        self._draw_marks()

    def ensure_current(self) -> None:
        """Finish pending work on this thread (an export is complete): a long map's overview and shown tiles too."""
        super().ensure_current()
        if self.res is not None and self.long.fill_now():
            self._draw_head()  # asks for the tiles this view shows
        if self.long.compute_shown():
            self._draw_head()

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
        mode = self.scale_box.mode
        shared = self.shared_max() if mode == "shared" else 1.0
        if self.on_demand is not None:
            od = self.on_demand  # per-map: the largest weight computed so far (the overview's, as it fills)
            self.vmax = scale_top(mode, float(od.overview.max()) or 1.0, shared)
            self.heatmap.set_shape((od.tq, od.tk))
            self._draw_tile()
            return
        if mode == "per-map":
            # the pyramid's coarsest level holds the head's true maximum in a few thousand values
            top = self._pyramids.get(r.head).levels[-1] if self._pyramids is not None else self.probs[r.head]
            self.vmax = scale_top(mode, float(top.max()), shared)
        else:
            self.vmax = scale_top(mode, 1.0, shared)
        if self._pyramids is None:
            self.image_data = quantize(self.probs[r.head], self.vmax, self.masked)
            self.heatmap.set_image(self.image_data, self.probs.shape[1:])
            self._label(0)
        else:
            self.heatmap.set_shape(self.probs.shape[1:])  # a new size shows all of it: crop after that
            self._draw_tile()

    def _viewport_changed(self, *args) -> None:
        """A pan, zoom or resize: a long map draws the crop of the pyramid level that fits the pixels."""
        if (self._pyramids is not None or self.on_demand is not None) and self.res is not None \
                and not self._rendering:
            self._draw_tile()

    def _draw_tile(self) -> None:
        """Draw the visible part of the shown head from the level with at most one value per pixel."""
        vb = self.heatmap.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        ratio = self.canvas.devicePixelRatioF()  # a high-density screen shows more values per logical pixel
        px_w, px_h = max(int(vb.width() * ratio), 1), max(int(vb.height() * ratio), 1)
        if self.on_demand is not None:
            self._draw_long(self.long.frame(y0, y1, x0, x1, px_h, px_w))
            return
        pyr = self._pyramids.get(self.res.head)
        tile = pyr.view(y0, y1, x0, x1, px_h, px_w)
        f = 1 << tile.level
        masked = self._pyramids.masked_block(tile.level, tile.row0 // f, -(-tile.row1 // f), tile.col0 // f,
                                             -(-tile.col1 // f))
        self.tile = tile
        self.image_data = quantize(tile.image, self.vmax, masked)
        self._rendering = True  # the image's new bounds must not start another draw
        try:
            self.heatmap.set_image(self.image_data, self.probs.shape[1:],
                                   (tile.row0, tile.row1, tile.col0, tile.col1))
        finally:
            self._rendering = False
        self._label(tile.level)

    def _draw_long(self, tile) -> None:
        """Draw the crop of a long on-demand map (a PyramidView, NaN where nothing is computed yet)."""
        unknown = np.isnan(tile.image)
        zero = tile.image == 0  # exp(−∞ − lse) = 0: masked (a pooled cell: its whole block is)
        self.tile = tile
        self.image_data = quantize(tile.image, self.vmax, unknown | zero)  # both grey; only masked is hatched
        self._hatch.show(zero, (tile.row0, tile.row1, tile.col0, tile.col1))  # masked: grey and hatched
        self._rendering = True
        try:
            self.heatmap.set_image(self.image_data, (self.on_demand.tq, self.on_demand.tk),
                                   (tile.row0, tile.row1, tile.col0, tile.col1))
        finally:
            self._rendering = False
        self._label(tile.level)

    def _redraw_arrived(self) -> None:
        """Bands or visible tiles of the long map arrived (GUI thread, once for all that came together)."""
        if self.res is not None and not self._rendering:
            if self.scale_box.mode == "per-map":
                self._draw_head()
            else:
                self._draw_tile()

    def _label(self, level: int) -> None:
        """Title and colour bar: which head, which scale, and whether a drawn cell is one value or a
        block's maximum (a long map says so at every zoom, so the bar keeps its width)."""
        r = self.res
        mode = self.scale_box.mode
        note = scale_note(mode, "layers and heads") if mode != "per-map" else "scale: this head's maximum"
        if mode == "shared" and self.on_demand is not None:
            note = "fixed scale 0–1 (a shared maximum needs every map of this long input)"
        f = 1 << level
        if self._pyramids is None and self.on_demand is None:
            detail, pooled = "", ""
        elif level:
            detail, pooled = f" · zoomed out: cell = max of {f}×{f}", pooled_phrase(f)
        else:
            detail, pooled = " · full zoom: exact values", ""
        label = f"attention weight · {note}{detail}"
        filling = self.long.filling if self.on_demand else ""
        running = running_suffix(self.preview) if self.preview is not None else self._running
        title = f"Layer {r.layer} · head {r.head} · {r.part_name}{pooled}{running}{filling}"
        if (self.vmax, label, title) != self._labelled:  # a pan within one level changes neither
            self._labelled = (self.vmax, label, title)
            self.heatmap.set_levels(0.0, self.vmax, label)
            self.heatmap.set_title(title)

    def shared_max(self) -> float:
        """Largest weight of every layer and head of the shown part (cached per trace and part)."""
        key = (id(self.trace), self.res.part)
        if self.on_demand is not None:  # every map of a long input is never computed at once: 0–1 fixed
            return 1.0
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
        self._labelled = None  # the title's colour and font follow the style
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
        if self.on_demand is not None:  # the one cell, recomputed exactly: never a block's maximum
            value = self.on_demand.value(row, col)
            return head + (format_value(value) if value else "0 (masked, or below float32's smallest weight)")
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
