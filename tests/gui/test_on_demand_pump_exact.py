"""The tiles the long head map's pump computes are exact: each equals the maximum over its block of a float64
causal softmax recomputed here from q and k (not the trace's own block code), at a pooled level (1) and at full
resolution (0). The queue's order and its FIFO control are in test_on_demand_tile_order.py."""

from __future__ import annotations

import numpy as np

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.heatmap_data import block_max
from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells

T = 16384  # four times the overview's 4,096 cells a side: levels 0 and 1 come in tiles


def _exact_rows(trace, rows: slice) -> np.ndarray:
    """Rows ``rows`` of the causal softmax of q·kᵀ·scale in float64, over every key: (rows, T)."""
    q, k = trace.arrays["L0.q"][0].astype(np.float64), trace.arrays["L0.k"][0].astype(np.float64)
    s = q[rows] @ k.T * trace.meta["scale"]
    s[np.arange(rows.start, rows.stop)[:, None] < np.arange(T)[None, :]] = -np.inf
    p = np.exp(s - s.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def test_pumped_tiles_are_the_exact_block_maxima_at_a_pooled_and_the_full_level():
    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)
    _, _, coarse = od.view(2000, 3000, 1000, 2000, 600, 600)  # 1,000 rows in 600 px: level 1
    od.want(coarse, od.last_ring)
    pump = od.pump()
    first = next(pump)
    _, _, fine = od.view(14000, 14200, 12000, 12200, 800, 800)  # a jump and zoom in: level 0
    assert first[0] == 1 and {k[0] for k in fine} == {0}
    od.want(fine)
    list(pump)
    for key in (first, fine[0]):
        level, i, j = key
        f, n = 1 << level, tile_cells(level)
        p = _exact_rows(trace, slice(i * n * f, (i + 1) * n * f))
        want = block_max(p[:, j * n * f:(j + 1) * n * f], f, f)
        np.testing.assert_allclose(od._tiles[key], want, atol=1e-6)
        if level:  # control: a block's mean is not what is drawn
            mean = p[:, j * n * f:(j + 1) * n * f].reshape(n, f, n, f).mean(axis=(1, 3))
            assert np.abs(od._tiles[key] - mean).max() > 1e-3
    tile, pending, _ = od.view(14000, 14200, 12000, 12200, 800, 800)  # what is drawn: every cell computed
    assert not pending.any() and not np.isnan(tile.image).any()
