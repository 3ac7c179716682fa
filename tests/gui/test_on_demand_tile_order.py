"""The long head map's tile queue: a new view's visible tiles come next, before anything an earlier view asked
for; tiles of a view panned past (or of another zoom level) are dropped, not computed. Control: a plain FIFO
queue (every request appended, computed in order) computes the stale tiles first and fails the same check."""

from __future__ import annotations

import numpy as np

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells


def _map(T: int = 8192):
    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)  # above the overview's 4,096: tiles
    return trace, OnDemandMap(trace, 0, "self", 0)


def _visible_first(order: list, first_view: list, second_view: list) -> bool:
    """After the first tile of the first view, the second view's visible tiles come next, in its order, and
    no other tile of the first view is computed at all."""
    return order[1:1 + len(second_view)] == second_view and not set(order[1:]) & set(first_view[1:])


def test_a_jump_puts_the_new_views_visible_tiles_next_and_drops_the_old_ones():
    trace, od = _map()
    _, _, seen_a = od.view(1100, 1700, 1100, 1700, 800, 800)  # level 0, several tiles
    assert od.want(seen_a, od.last_ring)  # nothing pumping yet: the caller starts a pump
    pump = od.pump()
    order = [next(pump)]  # the first tile is under way when the user jumps
    _, _, seen_b = od.view(6000, 6600, 5000, 5600, 800, 800)  # far away: every tile new
    assert len(seen_a) > 2 and len(seen_b) > 2 and not set(seen_a) & set(seen_b)
    assert not od.want(seen_b, od.last_ring)  # the running pump takes the new list: no new job
    order += list(pump)
    assert _visible_first(order, seen_a, seen_b)
    assert not od.wanted and not od.tiles_for(0, 6000, 6600, 5000, 5600)
    # what is drawn is exact: a computed tile of the new view equals the trace's own block
    _, i, j = seen_b[0]
    n = tile_cells(0)
    _, pending, _ = od.view(i * n, (i + 1) * n, j * n, (j + 1) * n, 800, 800)
    want = trace.probs(0, heads=0, rows=slice(i * n, (i + 1) * n), cols=slice(j * n, (j + 1) * n))[0]
    np.testing.assert_array_equal(od._tiles[seen_b[0]], want)
    assert not pending.any()

    # control: the same two requests through a FIFO queue compute the first view's tiles before the jump's
    _, fifo = _map()
    fifo_order = list(fifo.fill_tiles(seen_a + seen_b))
    assert not _visible_first(fifo_order, seen_a, seen_b)


def test_a_zoom_step_drops_the_other_levels_tiles():
    _, od = _map(16384)  # overview at level 2: levels 1 and 0 come in tiles
    _, _, coarse = od.view(1000, 2600, 1000, 2600, 800, 800)  # 1,600 rows in 800 px: level 1
    assert coarse and {k[0] for k in coarse} == {1}
    od.want(coarse, od.last_ring)
    pump = od.pump()
    first = next(pump)
    _, _, fine = od.view(1600, 2000, 1600, 2000, 800, 800)  # zoomed in: level 0
    assert {k[0] for k in fine} == {0}
    od.want(fine)
    rest = list(pump)
    assert rest == [k for k in fine if k != first]  # only the new level's visible tiles, in the view's order
    assert not od.wanted


def test_a_pump_that_ended_or_was_closed_is_started_again():
    _, od = _map()
    _, _, seen = od.view(1100, 1700, 1100, 1700, 800, 800)
    assert od.want(seen)
    assert not od.want(seen)  # one pump at a time: asked to run, not yet running
    pump = od.pump()
    next(pump)
    pump.close()  # its lane job was dropped between two tiles
    assert od.want(seen)  # a new pump is needed and asked for
    assert list(od.pump())  # computes what is left
    assert not od.want(seen)  # nothing left to compute: no pump
    od.cancel()
    _, _, other = od.view(6000, 6600, 5000, 5600, 800, 800)
    assert not od.want(other)  # a cancelled map (new head, layer or trace) starts nothing


def test_overview_bands_hold_off_while_visible_tiles_wait():
    _, od = _map()
    _, _, seen = od.view(1100, 1700, 1100, 1700, 800, 800)
    ring = od.last_ring
    od.want([], ring)  # control: only the ring wanted (nothing on screen waits): the overview runs
    assert od.tiles_idle.is_set()
    od.want(seen, ring)
    assert not od.tiles_idle.is_set()  # visible tiles wait: a band holds off for them
    pump = od.pump()
    for _ in seen:
        assert not od.tiles_idle.is_set()
        next(pump)
    assert od.tiles_idle.is_set() and od.wanted  # the visible ones are done; the ring is still to come
    pump.close()

    class Recorder:  # stands in for the event: records that every band asked first
        asked = 0

        def wait(self, timeout):
            self.asked += 1
            return True

    od.tiles_idle = rec = Recorder()
    bands = sum(1 for _ in od.fill_overview(band_rows=2048))
    from attnviz.gui.views.on_demand_map import BAND_CELLS

    assert bands == rec.asked == -(-8192 // min(2048, BAND_CELLS // 8192))  # a band is at most BAND_CELLS weights
