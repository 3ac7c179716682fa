"""The long head map's tiles: the view's visible tiles jump the queue, tiles it no longer shows are dropped.

One pump (one lane job) computes the tiles the last drawn view wants; a new view replaces that list, so after
a zoom step or a jump the next tile computed is the new view's, whatever the old one still lacked. The
control runs the same two requests first-in first-out (as one lane job per request would) and fails the
same checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.heatmap_data import block_max
from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells

T = 16384  # four times the overview's 4,096 cells a side: levels 0 and 1 come in tiles


@pytest.fixture(scope="module")
def trace():
    return on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)  # its rows' log-sum-exps: once for the file


def _map(trace):
    return OnDemandMap(trace, 0, "self", 0)  # an empty tile cache


def _requests(od):
    """Two views one after another: a level-1 view (1,000 rows in 600 px: ~20 tiles), then a jump and zoom to level 0 far away."""
    _, _, wide = od.view(2000, 3000, 1000, 2000, 600, 600)
    wide_ring = list(od.last_ring)
    _, _, near = od.view(14000, 14200, 12000, 12200, 800, 800)
    assert {k[0] for k in wide} == {1} and {k[0] for k in near} == {0} and len(wide) > 8 and near
    return wide, wide_ring, near


def _pump_order(od, wide, wide_ring, near, after: int):
    """Keys computed by one pump: the wide view wanted, ``after`` tiles done, then the near view wanted."""
    assert od.want(wide, wide_ring)  # nothing running: the caller starts the pump
    pump, order = od.pump(), []
    for _ in range(after):
        order.append(next(pump))
    assert not od.want(near, [])  # the running pump takes the new list: no second job
    order += list(pump)
    return order


def _fifo_order(od, wide, wide_ring, near, after: int):
    """Control: the same requests as queued jobs run in turn (the first one runs to its end)."""
    return list(od.fill_tiles(wide + wide_ring)) + list(od.fill_tiles(near))


def _check(order, wide, near, after):
    """The near view's tiles come right after the ``after`` tiles already done, and no other tile is computed."""
    assert order[:after] == wide[:after]
    assert order[after:after + len(near)] == near, "the new view's visible tiles come next"
    assert set(order) == set(wide[:after]) | set(near), "what the new view does not show is dropped"


def test_visible_tiles_of_a_new_view_come_next_and_stale_ones_are_dropped(trace):
    od = _map(trace)
    wide, wide_ring, near = _requests(od)
    order = _pump_order(od, wide, wide_ring, near, after=2)
    _check(order, wide, near, after=2)
    # the pump has ended: nothing is wanted, and the next request starts a new one
    assert od.wanted == [] and od.want(wide[-1:])


def test_control_first_in_first_out_fails_the_ordering_checks(trace):
    od = _map(trace)
    wide, wide_ring, near = _requests(od)
    order = _fifo_order(od, wide, wide_ring, near, after=2)
    try:
        _check(order, wide, near, after=2)
    except AssertionError:
        return
    raise AssertionError("first-in first-out passed the ordering checks: they test nothing")


def test_pumped_tiles_are_the_exact_maxima_of_the_map(trace):
    """What the pump computes and the view draws equals a float64 recomputation of the causal softmax."""
    od = _map(trace)
    wide, wide_ring, near = _requests(od)
    _pump_order(od, wide, wide_ring, near, after=1)
    q, k = trace.arrays["L0.q"][0].astype(np.float64), trace.arrays["L0.k"][0].astype(np.float64)
    for key in (wide[0], near[0]):
        level, i, j = key
        f, n = 1 << level, tile_cells(level)
        r, c = slice(i * n * f, (i + 1) * n * f), slice(j * n * f, (j + 1) * n * f)
        s = q[r] @ k.T * trace.meta["scale"]  # (rows, T): whole rows for the softmax's sum
        s[np.arange(r.start, r.stop)[:, None] < np.arange(T)[None, :]] = -np.inf
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        np.testing.assert_allclose(od._tiles[key], block_max(p[:, c], f, f), atol=1e-6)
    tile, pending, _ = od.view(14000, 14200, 12000, 12200, 800, 800)
    assert not pending.any() and not np.isnan(tile.image).any()


def test_a_cancelled_map_stops_its_pump_and_starts_none(trace):
    od = _map(trace)
    wide, wide_ring, _ = _requests(od)
    assert od.want(wide, wide_ring)
    pump = od.pump()
    next(pump)
    od.cancel()
    assert list(pump) == [] and not od.want(wide)
