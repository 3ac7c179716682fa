"""One head's map of a long input, asked of the trace block by block: never the whole T×T.

Numpy only (no Qt: the head map runs :meth:`OnDemandMap.fill_overview` on the views' lane and
:meth:`OnDemandMap.pump` on the tiles' lane, as generators, and redraws on each item they yield; each drawn view
replaces the tiles wanted with :meth:`OnDemandMap.want`, visible ones first). Every value comes from
``Trace.probs(layer, part, heads, rows, cols)``, which a long trace recomputes exactly from q, k and each
row's log-sum-exp. Level ℓ has one cell per 2^ℓ × 2^ℓ block holding the block's maximum (the same rule as
:class:`attnviz.analysis.pyramid.MaxPyramid`, so a one-token diagonal survives every zoom):

* the *overview* is level ``overview_level`` (at most ``OVERVIEW_SIDE`` cells a side), filled in bands of rows;
  the coarser levels are pooled from it;
* finer levels come in tiles of ``tile_cells(level)`` cells a side computed from the block of the map they cover, kept in
  a small least-recently-used cache (:class:`~attnviz.gui.views.tile_cache.TileCache`, which also keeps the finer
  levels' tiles of each block computed and pools a tile from finer ones it holds); until a tile arrives its cells
  show the overview's (coarser) maximum.

A cell whose value is exactly 0 is drawn as masked: exp(−∞ − lse) is 0 and every unmasked weight of a
float32 softmax is positive unless it underflows (s − lse < −103), which the hover says.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np

from attnviz.analysis.pyramid import PyramidView
from attnviz.gui.views.heatmap_data import MAX_PX, block_max
from attnviz.gui.views.tile_cache import TILE, TileCache, tile_cells, tile_span
from attnviz.gui.views.zoom_ahead import next_level_window, zoom_anchor

__all__ = ["OnDemandMap", "TILE", "MIN_SIDE", "tile_cells"]

MIN_SIDE = 128  # the coarsest level's longest side (as the stored maps' pyramids)
# the overview's longest side: 4,096 cells (64 MB a head, its coarser levels 22 MB more) rather than one
# screen's 1,024 costs the same to fill (every weight is computed either way) and leaves a zoom down to
# 4,096 rows in 1,000 px needing no tiles (at 16,384 tokens a level-2 or -3 view asked 30-130 tiles a
# frame: its last tiles came ~330 ms after the frame, p95)
OVERVIEW_SIDE = 4 * MAX_PX
OVERVIEW_YIELD_S = 0.25  # the longest an overview band waits for visible tiles before it runs anyway
BAND_ROWS = 256  # query rows of the map computed per overview step (a 256 × 16,384 block: 16 MB)
# ... and at most this many weights (32 MB of float32): 256 rows of 131,072 keys were 134 MB a band
BAND_CELLS = 1 << 23
DEFAULT_BUDGET = 64 * 2**20  # bytes of tiles kept (float32 256×256 tiles: 256 of them)
# a view asks, after its own visible tiles, for the tiles of the first finer level drawn from tiles that a zoom in
# about the pointer shows first (zoom_ahead.py), when that level is at most this many levels finer: a zoom in finds
# them computed rather than asking for all at once. 2: from the level above the overview's, whose zoom in goes
# through the overview (no tiles) to the first tiled level. Before, from 1.5× that level's zoom (~1 wheel notch of
# ×1.35): the 16,384-token zoom path's first level-1 frame lacked 15 visible tiles on a busy machine (the last came
# 80 ms later)
ZOOM_LEVELS_AHEAD = 2


def _level_at_most(n: int, side: int) -> int:
    """Smallest ℓ with ceil(n / 2^ℓ) ≤ side."""
    return max(0, math.ceil(math.log2(max(n, 1) / side))) if n > side else 0


class OnDemandMap:
    """Overview and tiles of head ``head`` of one layer of a trace whose probabilities are asked for in blocks."""

    def __init__(self, trace, layer: int, part: str, head: int, budget_bytes: int = DEFAULT_BUDGET):
        self.trace, self.layer, self.part, self.head = trace, int(layer), part, int(head)
        _, self.tq, self.tk = trace.probs_shape(layer, part)
        n = max(self.tq, self.tk)
        self.overview_level = _level_at_most(n, OVERVIEW_SIDE)
        self.top_level = max(self.overview_level, _level_at_most(n, MIN_SIDE))
        f = 1 << self.overview_level
        self.overview = np.zeros((-(-self.tq // f), -(-self.tk // f)), np.float32)  # (Tq/F, Tk/F)
        self.overview_rows = 0  # overview rows filled so far (the rest are drawn as not yet computed)
        self._tiles = TileCache(self.tq, self.tk, budget_bytes)  # (level, i, j) -> pooled tile
        self._lock = threading.Lock()
        # the levels above the overview's, pooled from it band by band as it fills (a frame only crops them)
        self._coarser = {lvl: np.zeros((-(-self.overview.shape[0] // (1 << (lvl - self.overview_level))),
                                        -(-self.overview.shape[1] // (1 << (lvl - self.overview_level)))),
                                       np.float32) for lvl in range(self.overview_level + 1, self.top_level + 1)}
        self.cancelled = False
        # for the benchmarks' tile latency: the tiles the last drawn view lacked (nearest the zoom's fixed point
        # first) and when each tile was stored (perf_counter seconds)
        self.last_missing: list[tuple[int, int, int]] = []
        self.last_ring: list[tuple[int, int, int]] = []  # not computed tiles around the last drawn view
        self.last_zoom_ahead: list[tuple[int, int, int]] = []  # the finer level's tiles a zoom in shows first
        self._drawn: tuple | None = None  # (row0, row1, col0, col1) of the last view asked for
        self.anchor: tuple[float, float] | None = None  # (row, col) the last zoom kept fixed (zoom_ahead.py)
        self.done_at: dict[tuple[int, int, int], float] = {}
        self.done_in_view: set[tuple[int, int, int]] = set()  # tiles stored while the view showed them
        # the tiles the view wants now, in the order to compute them (visible ones nearest the zoom's fixed point
        # first, then the ring): replaced whole by each drawn view, so a pan or zoom step drops what it no longer
        # shows and its visible tiles come next, whatever was asked before (see :meth:`want`, :meth:`pump`)
        self._wanted: list[tuple[int, int, int]] = []
        self.visible: frozenset = frozenset()  # the visible tiles of the last :meth:`want` (their arrival redraws)
        self._pumping = False  # a :meth:`pump` is running (or asked to run) and will read ``_wanted``
        # set while no visible tile waits: the overview's bands (another lane, ~30 ms CPU each at 16,384 keys)
        # hold off for visible tiles on a two-core machine, up to OVERVIEW_YIELD_S a band so it always fills
        self.tiles_idle = threading.Event()
        self.tiles_idle.set()

    # -- computing ------------------------------------------------------------------------------
    @property
    def overview_done(self) -> bool:
        return self.overview_rows >= self.overview.shape[0]

    def block(self, rows: slice, cols: slice) -> np.ndarray:
        """Exact probabilities of this head over ``rows`` × ``cols`` (float32, 2-D)."""
        return self.trace.probs(self.layer, self.part, heads=self.head, rows=rows, cols=cols)[0]

    def value(self, row: int, col: int) -> float:
        """The exact weight of one cell (the hover): never a block's maximum."""
        return float(self.block(slice(row, row + 1), slice(col, col + 1))[0, 0])

    def fill_overview(self, band_rows: int = BAND_ROWS):
        """Generator: compute the overview band by band (whole rows of the map), yielding the rows filled."""
        f = 1 << self.overview_level
        step = max(1, min(band_rows, BAND_CELLS // max(1, self.tk)) // f)  # overview rows per band (whole blocks)
        while not self.overview_done and not self.cancelled:
            self.tiles_idle.wait(OVERVIEW_YIELD_S)  # visible tiles first (set at once when none waits)
            o0 = self.overview_rows
            o1 = min(o0 + step, self.overview.shape[0])
            band = self.block(slice(o0 * f, min(o1 * f, self.tq)), slice(None))  # (rows, Tk)
            self.overview[o0:o1] = block_max(band, f, f)
            for lvl, pooled in self._coarser.items():  # the rows of each coarser level this band reaches
                g = 1 << (lvl - self.overview_level)
                a0, a1 = o0 // g, -(-o1 // g)
                pooled[a0:a1] = block_max(self.overview[a0 * g:o1], g, g)
            self.overview_rows = o1
            yield o1

    def take_over(self, other: "OnDemandMap") -> None:
        """Keep what ``other`` computed of the very same numbers (the caller checked that: a long preview's map of
        this layer and head, whose q, k, lse and score rule the trace holds unchanged): its overview rows filled
        so far and its tiles. Called before this map's fills start; ``other`` is cancelled and may still be
        finishing a band, whose rows this map fills again."""
        if (other.tq, other.tk, other.overview_level) != (self.tq, self.tk, self.overview_level):
            raise ValueError("a map of another shape computes other numbers")
        rows = other.overview_rows  # read first: a band writes its rows before it counts them
        self.overview[:rows] = other.overview[:rows]
        for lvl, pooled in self._coarser.items():  # the rows a running band touches are pooled again by the next
            pooled[:] = other._coarser[lvl]
        self.overview_rows = rows
        with other._lock:
            tiles = list(other._tiles.items())  # least recently drawn first: kept in that order
        with self._lock:
            for key, tile in tiles:
                self._tiles.put(key, tile)

    def tiles_for(self, level: int, r0: int, r1: int, c0: int, c1: int) -> list[tuple[int, int, int]]:
        """Keys (level, tile row, tile col) of the tiles covering cells [r0, r1) × [c0, c1) of ``level``
        that are not computed yet (empty at the overview's level and above: those come from the overview)."""
        if level >= self.overview_level:
            return []
        n = tile_cells(level)
        with self._lock:
            return [(level, i, j) for i in range(r0 // n, -(-r1 // n)) for j in range(c0 // n, -(-c1 // n))
                    if (level, i, j) not in self._tiles]

    def tile(self, key: tuple[int, int, int]) -> np.ndarray:
        """Tile ``key`` now (on the calling thread): pooled from finer tiles kept (a zoom out), else computed from
        the block of the map it covers, whose finer levels' tiles are kept too (a zoom in finds them)."""
        with self._lock:
            pooled = self._tiles.from_finer(key)
            if pooled is not None:
                self._tiles.put(key, pooled)
        if pooled is None:
            level, i, j = key
            span = tile_span(level)  # map rows a side
            block = self.block(slice(i * span, min((i + 1) * span, self.tq)),
                               slice(j * span, min((j + 1) * span, self.tk)))  # (≤span, ≤span) exact weights
            with self._lock:
                pooled = self._tiles.put_block(key, block)  # (≤n, ≤n)
        with self._lock:
            if len(self.done_at) > 16384:
                self.done_at.clear()
                self.done_in_view.clear()
            self.done_at[key] = time.perf_counter()
            if key in self.visible:
                self.done_in_view.add(key)
        return pooled

    def fill_tiles(self, keys: list[tuple[int, int, int]]):
        """Generator: compute ``keys`` in order, yielding each key done (scripts and tests; the view asks
        through :meth:`want` and :meth:`pump`, whose list a newer view replaces)."""
        for key in keys:
            if self.cancelled:
                return
            with self._lock:
                if key in self._tiles:
                    continue
            self.tile(key)
            yield key

    def compute_shown(self) -> bool:
        """The wanted tiles that are in view, computed now on this thread (an export); True if there were any."""
        shown = [key for key in self.wanted if key in self.visible]
        for key in shown:
            self.tile(key)
        return bool(shown)

    def want(self, visible: list[tuple[int, int, int]], ahead: list[tuple[int, int, int]] = ()) -> bool:
        """Replace the tiles wanted: ``visible`` (in order) first, then ``ahead`` (prefetched for the next
        frames). Tiles wanted before and not listed now (panned past, another zoom level) are dropped.

        Returns True when no :meth:`pump` is running to compute them: the caller starts one (on the tiles'
        lane). A running pump takes the new list at its next tile, with no new job: a lane job per frame
        waited for the GUI thread to start it (the old job's end is delivered there), which left the
        worker idle about half of a zoom (at 16,384 tokens: visible tiles ready 105-155 ms, p95).
        """
        with self._lock:
            # visible tiles that kept finer tiles cover first: pooled from them, no probability computed
            cheap = [k for k in visible if self._tiles.covering(k) is not None]
            self._wanted = [k for k in dict.fromkeys([*cheap, *visible, *ahead]) if k not in self._tiles]
            self.visible = frozenset(visible)
            self._note_visible_waiting()
            start = bool(self._wanted) and not self._pumping and not self.cancelled
            self._pumping = self._pumping or start
        return start

    @property
    def wanted(self) -> list[tuple[int, int, int]]:
        """The tiles still to compute, in the order :meth:`pump` takes them."""
        with self._lock:
            return list(self._wanted)

    def pump(self):
        """Generator (one lane job): compute the first wanted tile, again and again, yielding each key done,
        until none is wanted or the map is cancelled. The list is read afresh before every tile, so a new
        view's visible tiles come after at most the one tile being computed (a tile is ≤ 256 × 256 weights:
        about 1-5 ms)."""
        try:
            while True:
                with self._lock:
                    while self._wanted and self._wanted[0] in self._tiles:
                        self._wanted.pop(0)
                    if self.cancelled or not self._wanted:
                        self._pumping = False  # under the lock: a want() from now on starts a new pump
                        return
                    key = self._wanted.pop(0)
                self.tile(key)
                with self._lock:
                    self._note_visible_waiting()
                yield key
        finally:  # closed by its lane (job dropped) or an error: a later want() must start a new pump
            with self._lock:
                self._pumping = False
                self.tiles_idle.set()

    def _note_visible_waiting(self) -> None:
        """Clear ``tiles_idle`` while a visible tile is still wanted, set it otherwise (caller holds the lock)."""
        if not self.cancelled and any(k in self.visible for k in self._wanted):
            self.tiles_idle.clear()
        else:
            self.tiles_idle.set()

    # -- drawing --------------------------------------------------------------------------------
    def level_for(self, rows: float, cols: float, px_h: int, px_w: int) -> int:
        """Finest level with at most one value per screen pixel along both axes (as MaxPyramid.level_for)."""
        per_px = max(rows / max(px_h, 1), cols / max(px_w, 1))
        level = int(np.ceil(np.log2(per_px))) if per_px > 1 else 0
        return min(max(level, 0), self.top_level)

    def view(self, row0: float, row1: float, col0: float, col1: float, px_h: int, px_w: int):
        """(PyramidView, pending, missing): the crop of the finest level with one value per pixel covering
        data rows [row0, row1) × columns [col0, col1), widened to whole cells of that level.

        ``image`` is float32 with NaN where nothing is computed yet; ``pending`` is True where a cell shows a
        coarser level's maximum until its tile arrives; ``missing`` lists those tiles, nearest the point the zoom
        keeps fixed first (:attr:`anchor`: a wheel zoom's pointer; the middle of a pan or a first view).
        """
        asked = (float(row0), float(row1), float(col0), float(col1))
        if asked != self._drawn or self.anchor is None:  # a redraw for tiles that came keeps the zoom's anchor
            self.anchor, self._drawn = zoom_anchor(self._drawn, asked), asked
        row0, row1 = max(0, int(np.floor(row0))), min(self.tq, int(np.ceil(row1)))
        col0, col1 = max(0, int(np.floor(col0))), min(self.tk, int(np.ceil(col1)))
        if row1 <= row0 or col1 <= col0:
            return PyramidView(np.zeros((0, 0), np.float32), 0, row0, row0, col0, col0), None, []
        level = self.level_for(row1 - row0, col1 - col0, px_h, px_w)
        f = 1 << level
        r0, c0, r1, c1 = row0 // f, col0 // f, -(-row1 // f), -(-col1 // f)  # cells of this level
        bounds = (r0 * f, min(r1 * f, self.tq), c0 * f, min(c1 * f, self.tk))
        per_px = max((row1 - row0) / max(px_h, 1), (col1 - col0) / max(px_w, 1))
        self.last_zoom_ahead = self._zoom_ahead(level, per_px, asked)
        if level >= self.overview_level:
            self.last_missing, self.last_ring = [], []
            image, pending = self._from_overview(level, r0, r1, c0, c1), None
            return PyramidView(image, level, *bounds), pending, []
        image = self._overview_under(level, r0, r1, c0, c1)  # placeholders: the coarser maximum
        pending = np.ones(image.shape, bool)
        n = tile_cells(level)
        with self._lock:
            # a zoom in: the tiles of the coarser levels drawn before stand in (scaled up) until this level's come
            for coarser in range(self.overview_level - 1, level, -1):
                self._paste_coarser(image, coarser, level, r0, r1, c0, c1)
            for i in range(r0 // n, -(-r1 // n)):
                for j in range(c0 // n, -(-c1 // n)):
                    t = self._tiles.get((level, i, j))
                    if t is None:
                        continue
                    self._tiles.move_to_end((level, i, j))
                    # the part of tile (i, j) inside the crop, in crop and in tile coordinates
                    a0, a1 = max(r0, i * n), min(r1, i * n + t.shape[0])
                    b0, b1 = max(c0, j * n), min(c1, j * n + t.shape[1])
                    image[a0 - r0:a1 - r0, b0 - c0:b1 - c0] = t[a0 - i * n:a1 - i * n, b0 - j * n:b1 - j * n]
                    pending[a0 - r0:a1 - r0, b0 - c0:b1 - c0] = False
        missing = self.tiles_for(level, r0, r1, c0, c1)
        # nearest the point a wheel zoom keeps fixed first (the middle for a pan): the tiles that stay on screen
        mid_r, mid_c = self.anchor[0] / f / n, self.anchor[1] / f / n  # in tiles of this level
        near = lambda k: (k[1] + 0.5 - mid_r) ** 2 + (k[2] + 0.5 - mid_c) ** 2  # noqa: E731
        missing.sort(key=near)
        self.last_missing = missing
        # the ring of tiles around the visible ones, for a pan to find ready (computed after them)
        rows_l, cols_l = -(-self.tq // f), -(-self.tk // f)  # cells of this level
        shown = set(missing)
        ring = [key for key in self.tiles_for(level, max(0, r0 - n), min(rows_l, r1 + n), max(0, c0 - n),
                                              min(cols_l, c1 + n)) if key not in shown]
        self.last_ring = sorted(ring, key=near)
        return PyramidView(image, level, *bounds), pending, missing

    def _zoom_ahead(self, level: int, per_px: float, asked: tuple) -> list:
        """Tiles not computed yet of the first level finer than ``level`` drawn from tiles, that a zoom about
        :attr:`anchor` shows first (the view ``asked`` scaled to that level's zoom, which stays the same window all
        along such a zoom), nearest the anchor first; none when that level is more than ZOOM_LEVELS_AHEAD finer."""
        target = min(level - 1, self.overview_level - 1)  # the overview's level and those above need no tiles
        if target < 0 or level - target > ZOOM_LEVELS_AHEAD:
            return []
        f, n = 1 << target, tile_cells(target)
        y0, y1, x0, x1 = next_level_window(asked, self.anchor, per_px, f)
        r0, r1 = max(0, int(np.floor(y0))) // f, -(-min(self.tq, int(np.ceil(y1))) // f)  # cells of that level
        c0, c1 = max(0, int(np.floor(x0))) // f, -(-min(self.tk, int(np.ceil(x1))) // f)
        if r1 <= r0 or c1 <= c0:
            return []
        mid_r, mid_c = self.anchor[0] / f / n, self.anchor[1] / f / n  # the anchor in tiles of that level
        return sorted(self.tiles_for(target, r0, r1, c0, c1),
                      key=lambda k: (k[1] + 0.5 - mid_r) ** 2 + (k[2] + 0.5 - mid_c) ** 2)

    def _paste_coarser(self, image: np.ndarray, coarser: int, level: int, r0: int, r1: int, c0: int,
                       c1: int) -> None:
        """Draw the computed tiles of level ``coarser`` over the crop [r0, r1) × [c0, c1) of the finer ``level``
        (``image``), each cell repeated over the 2^Δ × 2^Δ cells it pools: the maximum of a smaller block than
        the overview's, shown until this level's own tiles come (caller holds the lock)."""
        g, n = 1 << (coarser - level), tile_cells(coarser)  # finer cells per coarser cell; cells a coarser tile
        R0, R1, C0, C1 = r0 // g, -(-r1 // g), c0 // g, -(-c1 // g)  # the crop in cells of the coarser level
        for i in range(R0 // n, -(-R1 // n)):
            for j in range(C0 // n, -(-C1 // n)):
                t = self._tiles.get((coarser, i, j))
                if t is None:
                    continue
                a0, a1 = max(R0, i * n), min(R1, i * n + t.shape[0])  # coarser cells of the tile in the crop
                b0, b1 = max(C0, j * n), min(C1, j * n + t.shape[1])
                if a1 <= a0 or b1 <= b0:
                    continue
                part = t[a0 - i * n:a1 - i * n, b0 - j * n:b1 - j * n]
                big = np.repeat(np.repeat(part, g, axis=0), g, axis=1)  # (Δrows·g, Δcols·g) finer cells
                y0, x0 = max(a0 * g, r0), max(b0 * g, c0)  # the finer cells covered, inside the crop
                y1, x1 = min(a1 * g, r1), min(b1 * g, c1)
                image[y0 - r0:y1 - r0, x0 - c0:x1 - c0] = big[y0 - a0 * g:y1 - a0 * g, x0 - b0 * g:x1 - b0 * g]

    def _from_overview(self, level: int, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """Cells [r0, r1) × [c0, c1) of a level at or above the overview's, NaN where rows are not filled yet."""
        g = 1 << (level - self.overview_level)  # overview cells per cell of this level
        if g == 1:
            out = self.overview[r0:r1, c0:c1].copy()
        elif level in self._coarser:
            out = self._coarser[level][r0:r1, c0:c1].copy()
        else:
            out = block_max(self.overview[r0 * g:r1 * g, c0 * g:c1 * g], g, g)
        if self.overview_done:
            return out
        unfilled = np.arange(r0, r0 + out.shape[0]) * g + g > self.overview_rows  # a block reaching unfilled rows
        out[unfilled] = np.nan
        return out

    def _overview_under(self, level: int, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """Cells [r0, r1) × [c0, c1) of a finer level showing the overview cell each lies in (NaN if unfilled)."""
        g = 1 << (self.overview_level - level)  # cells of this level per overview cell
        rows = np.arange(r0, r1) // g
        cols = np.arange(c0, c1) // g
        out = self.overview[np.ix_(np.minimum(rows, self.overview.shape[0] - 1),
                                   np.minimum(cols, self.overview.shape[1] - 1))].copy()
        out[rows >= self.overview_rows] = np.nan
        # a crop past the map's last cell (a partial last block) has no data
        return out

    def cancel(self) -> None:
        """Stop running fills at their next step (a new trace, layer or head)."""
        self.cancelled = True
        self.tiles_idle.set()  # an overview band waiting for tiles ends now
