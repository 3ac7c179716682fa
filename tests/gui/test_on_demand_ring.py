"""The long head map asks for the ring of tiles around the visible ones after them, so a pan finds them ready."""

from __future__ import annotations

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells


def test_ring_is_the_next_tiles_around_the_view_and_a_pan_finds_them_computed():
    trace = on_demand_trace(8192, n_layers=1, n_heads=1, d_head=8)  # above the overview's 4,096: tiles
    od = OnDemandMap(trace, 0, "self", 0)
    n = tile_cells(0)
    # a 200-row view at full resolution inside tiles (4..5, 4..5) of level 0
    _, _, missing = od.view(1100, 1300, 1100, 1300, 800, 800)
    assert {k[1:] for k in missing} == {(4, 4), (4, 5), (5, 4), (5, 5)}
    ring = od.last_ring
    assert {k[1:] for k in ring} == {(i, j) for i in range(3, 7) for j in range(3, 7)} - {k[1:] for k in missing}
    assert all(k[0] == 0 for k in ring)
    for _ in od.fill_tiles(missing + ring):
        pass
    # panned by most of a tile in each direction: every visible tile was computed before the pan
    _, pending, missing = od.view(1100 - n + 10, 1300 - n + 10, 1100 + n - 10, 1300 + n - 10, 800, 800)
    assert missing == [] and not pending.any()
    # control: a pan two tiles away lacks tiles (the ring is one tile deep)
    _, _, missing = od.view(1100 + 2 * n, 1300 + 2 * n, 1100, 1300, 800, 800)
    assert missing


def test_the_ring_stays_inside_the_map():
    trace = on_demand_trace(8192, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)
    od.view(0, 200, 0, 200, 800, 800)  # the top-left corner: no tile at index −1
    assert od.last_ring and all(i >= 0 and j >= 0 for _, i, j in od.last_ring)
    last = -(-8192 // tile_cells(0)) - 1
    od.view(8192 - 200, 8192, 8192 - 200, 8192, 800, 800)  # the bottom-right corner
    assert od.last_ring and all(i <= last and j <= last for _, i, j in od.last_ring)


def test_levels_above_the_overview_are_its_maxima_pooled_once():
    """Zoomed out past the overview's level: each drawn cell is the maximum of its block of the exact map
    (recomputed here as a float64 causal softmax of q·kᵀ), from the coarser levels pooled as the overview
    filled; part-way through the fill, rows not filled yet are NaN (drawn as not computed)."""
    import numpy as np

    from attnviz.gui.views.heatmap_data import block_max

    T = 4096
    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)
    fill = od.fill_overview(band_rows=1024)
    next(fill)  # the first 1,024 rows only
    part, _, _ = od.view(0, T, 0, T, 300, 300)
    f = 1 << part.level
    rows_done = np.arange(part.image.shape[0]) * f + f <= 1024
    assert rows_done.any() and np.isnan(part.image[~rows_done]).all() and not np.isnan(part.image[rows_done]).any()
    for _ in fill:
        pass
    q, k = trace.arrays["L0.q"][0].astype(np.float64), trace.arrays["L0.k"][0].astype(np.float64)
    s = q @ k.T * trace.meta["scale"]
    s[np.triu(np.ones((T, T), bool), 1)] = -np.inf
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    tile, pending, missing = od.view(0, T, 0, T, 300, 300)  # 4,096 rows in 300 px: level 4
    f = 1 << tile.level
    assert tile.level > od.overview_level and pending is None and missing == []
    np.testing.assert_allclose(tile.image, block_max(p, f, f), atol=1e-6)
    again, _, _ = od.view(1000, 3000, 0, 2000, 150, 150)  # the same level, another crop
    np.testing.assert_allclose(again.image, block_max(p, f, f)[again.row0 // f:-(-again.row1 // f),
                                                              again.col0 // f:-(-again.col1 // f)], atol=1e-6)
    # control: a block's mean (not its maximum) is not what is drawn
    mean = p.reshape(T // f, f, T // f, f).mean(axis=(1, 3))
    assert np.abs(tile.image - mean).max() > 1e-3
