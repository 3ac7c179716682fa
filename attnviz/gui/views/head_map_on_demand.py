"""The head map's long map asked for in blocks: a component :class:`HeadMapView` holds (composition, not a mixin).

:class:`OnDemandHeadMap` owns one :class:`OnDemandMap` at a time and everything about computing it: the overview
filled band by band on the views' lane, the tiles a drawn view wants computed on the tiles' lane, cancelling both
when the head, layer or trace changes, one redraw for whatever arrived together, and the title's note of what is
still being computed. The view draws what :meth:`OnDemandHeadMap.frame` returns; it asks no lane itself.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

from attnviz.analysis.pyramid import PyramidView
from attnviz.gui.views.on_demand_map import OnDemandMap

__all__ = ["OnDemandHeadMap"]


class OnDemandHeadMap:
    """Overview and tiles of the long head map on screen.

    Parameters
    ----------
    owner : the view: the lanes' jobs belong to it and its timer context ends the redraws with it.
    redraw : called on the GUI thread once for the bands and visible tiles that arrived together (the view
        redraws what it shows; never called for a map that is no longer current).
    """

    def __init__(self, owner: QObject, redraw: Callable[[], None]):
        self.owner = owner
        self._redraw = redraw
        self.map: OnDemandMap | None = None  # the current map (None: the view shows no long on-demand map)
        self.filling = ""  # what the title says is still being computed (" · computing overview: …")
        self._queued = False  # a redraw for computed bands or tiles is on its way
        self._kept = (None, None)  # (map, preview) of a long preview dropped while its view was cleared

    def handed(self, preview, trace) -> tuple:
        """(map, preview) a new trace may take over (:meth:`start`'s ``computed``, when the numbers are the same):
        the long preview's map on screen; or, the view being cleared (``trace`` None: a hidden tab holds no
        input's figure while another input's trace comes), that map, kept until the next trace comes (its rows
        filled so far then come with it when the tab is shown)."""
        got = (self.map, preview) if preview is not None else self._kept
        self._kept = got if trace is None else (None, None)
        return got

    def start(self, trace, layer: int, part: str, head: int, computed: OnDemandMap | None = None) -> OnDemandMap:
        """A new head (or layer): the old map's fills stop; the new overview is filled on the views' lane.
        ``computed``: a map of the very same numbers (a long preview's, checked by the caller): what it computed
        is kept and the fill goes on from its last row (at 8,192 tokens its whole overview was computed again,
        about a second of grey band)."""
        from attnviz.gui.workers import views_lane

        self.drop()
        self.map = od = OnDemandMap(trace, layer, part, head)
        if computed is not None:
            od.take_over(computed)
        views_lane().submit(("head-map-overview", id(self.owner)), od.fill_overview, owner=self.owner,
                            on_progress=lambda _rows, od=od: self._arrived(od))
        return od

    def drop(self) -> None:
        """No long map on screen any more (a short map, a preview, a new trace): its fills stop at their next step."""
        if self.map is not None:
            self.map.cancel()
            self.map = None

    def fill_now(self) -> bool:
        """Fill the overview on this thread if it is not complete (an export: a file written before the lane's
        fill said "computing overview: 256 of 8,190 rows"). True when it was filled here (the caller redraws,
        which asks for the tiles that view shows; :meth:`compute_shown` then computes them)."""
        od = self.map
        if od is None or od.overview_done:
            return False
        # the lane may be mid-band on this map: a fresh one is filled here and the old one cancelled
        self.drop()
        self.map = od = OnDemandMap(od.trace, od.layer, od.part, od.head)
        for _rows in od.fill_overview():
            pass
        return True

    def compute_shown(self) -> bool:
        """The tiles the last drawn frame shows and lacks, computed on this thread; True if there were any."""
        return self.map is not None and self.map.compute_shown()

    def frame(self, y0: float, y1: float, x0: float, x1: float, px_h: int, px_w: int) -> PyramidView:
        """The crop of map rows [y0, y1) × columns [x0, x1) for a px_w × px_h view, its missing tiles asked for.

        The visible tiles come first, nearest the point a zoom keeps fixed (the middle of a pan), then the finer
        level's tiles that zoom shows first and the ring around the view (prefetched for the next zoom and pan
        frames); this replaces what the last frame wanted, so a running pump computes this frame's visible tiles
        next (after at most the tile it is on).
        ``filling`` says what is still being computed.
        """
        from attnviz.gui.workers import tiles_lane

        od = self.map
        tile, pending, missing = od.view(y0, y1, x0, x1, px_h, px_w)
        if od.want(missing, od.last_zoom_ahead + od.last_ring):
            tiles_lane().submit(("head-map-tiles", id(self.owner), id(od)), od.pump, owner=self.owner,
                                on_progress=lambda key, od=od: key in od.visible and self._arrived(od),
                                on_result=lambda _none, od=od: self._arrived(od))
        if not od.overview_done:
            self.filling = f" · computing overview: {od.overview_rows * (1 << od.overview_level):,} of {od.tq:,} rows"
        elif pending is not None and pending.any():
            self.filling = f" · refining: {len(missing)} tiles to compute"
        else:
            self.filling = ""
        return tile

    def _arrived(self, od: OnDemandMap) -> None:
        """A band of the overview or a tile is computed (GUI thread): one redraw for all that arrived together
        (a zoom step asks for dozens of tiles; a redraw each cost the pan its frames)."""
        if od is self.map and not self._queued:
            self._queued = True
            QTimer.singleShot(0, self.owner, self._redraw_arrived)  # the view as context: never after it is gone

    def _redraw_arrived(self) -> None:
        self._queued = False
        if self.map is not None:
            self._redraw()
