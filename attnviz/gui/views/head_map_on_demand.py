"""The head map's long maps asked for in blocks: a mixin of :class:`HeadMapView` (split from it to keep each file
small). An :class:`OnDemandMap` fills a max-pooled overview band by band on the views' lane and computes the
visible tiles on the tiles' lane; this part starts, cancels and draws them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer

from attnviz.analysis.decoder_positions import end_row
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.views.on_demand_map import OnDemandMap
from attnviz.text.token_display import numbered_labels

__all__ = ["OnDemandLoading", "axis_labels"]


def axis_labels(r, long: bool) -> tuple[list, list]:
    """Query and key labels; a pooled long map's name their positions (its axes draw every n-th token)."""
    q, k = r.query_tokens, r.key_tokens
    return (numbered_labels(q), numbered_labels(k)) if long else (q, k)


class OnDemandLoading:
    """The on-demand half of :class:`HeadMapView` (uses its ``trace``, ``res``, ``heatmap``, ``on_demand``,
    ``_hatch``, ``scale_box``, ``vmax``, ``_draw_head``, ``_draw_tile``, ``_draw_marks``, ``_label`` and
    ``_set_grid_labels``)."""

    def _load_on_demand(self, tq: int, tk: int) -> None:
        r = self.res
        self.probs, self.masked, self._mask_id = None, None, None
        self.heatmap.set_mask(None)  # a long map's masked cells are its exact zeros, hatched per crop
        self._hatch.forget()
        self.heatmap.set_labels(*axis_labels(r, True))
        self._set_grid_labels()
        self._start_on_demand()
        self._draw_head()
        self.heatmap.set_veiled_row(end_row(self.trace, r.part))
        self._draw_marks()

    def ensure_current(self) -> None:
        """Finish pending work on this thread (an export is complete): a long map's overview and shown tiles too
        (a file written before the lane's fill said "computing overview: 256 of 8,190 rows")."""
        super().ensure_current()
        if self.on_demand is not None and self.res is not None and not self.on_demand.overview_done:
            r = self.res  # the lane may be mid-band on the old map: a fresh one filled here, the old cancelled
            self._drop_on_demand()
            self.on_demand = OnDemandMap(self.trace, r.layer, r.part, r.head)
            for _rows in self.on_demand.fill_overview():
                pass
            self._draw_head()
        if self.on_demand is not None and self.on_demand.compute_shown():
            self._draw_head()

    def _start_on_demand(self) -> None:
        """A new head (or layer): its overview is filled band by band on the views' lane."""
        from attnviz.gui.workers import views_lane

        self._drop_on_demand()
        r = self.res
        self.on_demand = od = OnDemandMap(self.trace, r.layer, r.part, r.head)
        views_lane().submit(("head-map-overview", id(self)), od.fill_overview, owner=self,
                            on_progress=lambda _rows, od=od: self._on_demand_arrived(od))

    def _drop_on_demand(self) -> None:
        if self.on_demand is not None:
            self.on_demand.cancel()
            self.on_demand = None

    def _on_demand_arrived(self, od: OnDemandMap) -> None:
        """A band of the overview or a tile is computed (GUI thread): redraw what is visible, once for all
        that arrived together (a zoom step asks for dozens of tiles; a redraw each cost the pan its frames)."""
        if od is self.on_demand and not self._redraw_queued:
            self._redraw_queued = True
            QTimer.singleShot(0, self, self._redraw_arrived)  # the view as context: never after it is gone

    def _redraw_arrived(self) -> None:
        self._redraw_queued = False
        if self.on_demand is not None and self.res is not None and not self._rendering:
            if self.scale_box.mode == "per-map":
                self._draw_head()
            else:
                self._draw_tile()

    def _draw_on_demand(self, y0, y1, x0, x1, px_h, px_w) -> None:
        from attnviz.gui.workers import tiles_lane

        od = self.on_demand
        tile, pending, missing = od.view(y0, y1, x0, x1, px_h, px_w)
        # the visible tiles first, nearest the centre first, then the finer level's under them when a zoom in is
        # near and the ring around them (prefetched for the next zoom and pan frames); this replaces what the last view wanted, so a running pump computes this view's
        # visible tiles next (after at most the tile it is on). A redraw per visible tile, and one at the end
        if od.want(missing, od.last_zoom_ahead + od.last_ring):
            tiles_lane().submit(("head-map-tiles", id(self), id(od)), od.pump, owner=self,
                                on_progress=lambda key, od=od: key in od.visible and self._on_demand_arrived(od),
                                on_result=lambda _none, od=od: self._on_demand_arrived(od))
        unknown = np.isnan(tile.image)
        zero = tile.image == 0  # exp(−∞ − lse) = 0: masked (a pooled cell: its whole block is)
        self.tile = tile
        self.image_data = quantize(tile.image, self.vmax, unknown | zero)  # both grey; only masked is hatched
        self._hatch.show(zero, (tile.row0, tile.row1, tile.col0, tile.col1))  # masked: grey and hatched
        if not od.overview_done:
            self._filling = f" · computing overview: {od.overview_rows * (1 << od.overview_level):,} of {od.tq:,} rows"
        elif pending is not None and pending.any():
            self._filling = f" · refining: {len(missing)} tiles to compute"
        else:
            self._filling = ""
        self._rendering = True
        try:
            self.heatmap.set_image(self.image_data, (od.tq, od.tk), (tile.row0, tile.row1, tile.col0, tile.col1))
        finally:
            self._rendering = False
        self._label(tile.level)
