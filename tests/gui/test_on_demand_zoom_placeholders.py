"""Zoomed in on a long map, the cells whose tiles are not computed yet show the coarser level's tiles computed
before (each the maximum of a smaller block than the overview's), not the overview or nothing. (A coarser tile's
block also gives the finer tiles, test_tile_reuse.py; here they are dropped, as the cache's budget may.)"""

from __future__ import annotations

import numpy as np

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells

T = 16384  # the overview is level 2 (4,096 cells a side): levels 0 and 1 come in tiles


def test_a_zoom_in_shows_the_coarser_tiles_until_its_own_come():
    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)
    assert od.overview_level == 2 and od.overview_rows == 0  # nothing of the overview filled
    r0, c0 = 5000, 4700  # a 200 × 200 view at full resolution (level 0), below the diagonal
    image, pending, missing = od.view(r0, r0 + 200, c0, c0 + 200, 800, 800)
    assert image.level == 0 and missing and np.isnan(image.image).all()  # the control: nothing to show yet
    span = tile_cells(1) << 1  # map rows a level-1 tile covers
    for key in {(1, r // span, c // span) for r in (r0, r0 + 199) for c in (c0, c0 + 199)}:
        od.tile(key)  # what a zoom through level 1 computed
    for key in [k for k in od._tiles if k[0] == 0]:
        od._tiles.pop(key)  # the level-0 tiles their blocks gave (tile_cache.py), dropped as the budget does
    image, pending, missing = od.view(r0, r0 + 200, c0, c0 + 200, 800, 800)
    assert missing and pending.all()  # level 0's own tiles still to come
    got = image.image  # (200, 200) level-0 cells
    assert not np.isnan(got).any()
    # each cell shows the maximum of the 2 × 2 block of the exact map it lies in (computed here from the map)
    exact = trace.probs(0, heads=0, rows=slice(r0, r0 + 200), cols=slice(c0, c0 + 200))[0]
    pooled = exact.reshape(100, 2, 100, 2).max(axis=(1, 3))  # r0, c0 even: blocks align with level 1's cells
    # (rtol: a block of another shape is another float32 product, so the last bits may differ)
    np.testing.assert_allclose(got, np.repeat(np.repeat(pooled, 2, 0), 2, 1), rtol=1e-5)
    assert not np.allclose(got, exact, rtol=1e-3)  # a block's maximum, not the cells' own values (they come next)
    for _ in od.fill_tiles(missing):
        pass
    image, pending, missing = od.view(r0, r0 + 200, c0, c0 + 200, 800, 800)
    assert not missing and not pending.any()
    np.testing.assert_allclose(image.image, exact, rtol=1e-5)  # its own tiles replace the stand-ins
