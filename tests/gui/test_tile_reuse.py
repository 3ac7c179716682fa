"""Tiles of the long head map reused across levels (tile_cache.py) are the tiles a fresh computation gives.

A zoom in finds the finer level's tiles kept from the exact block computed for the coarser tile, and a zoom out
pools a tile from finer tiles kept: in both cases no probability is asked of the trace again (its cell counter
stays), and the tile equals both the one a fresh map computes from its own block and the block maximum of a
float64 causal softmax recomputed here from q and k. Controls: without the kept tiles the same view asks the
trace; a head's map never holds another head's tiles, and after a head change the view draws the new head.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnviz.bench.on_demand_traces import on_demand_trace  # noqa: E402
from attnviz.gui.views.heatmap_data import block_max  # noqa: E402
from attnviz.gui.views.on_demand_map import OnDemandMap  # noqa: E402
from attnviz.gui.views.tile_cache import TileCache, tile_cells, tile_span  # noqa: E402

T = 8492  # overview level 2 (levels 0 and 1 in tiles); not a multiple of 256: the last tiles are partial


@pytest.fixture(scope="module")
def trace():
    return on_demand_trace(T, n_layers=1, n_heads=2, d_head=8)


def _exact(trace, head: int, rows: slice, cols: slice) -> np.ndarray:
    """Independent recomputation: rows × cols of the causal float64 softmax of q·kᵀ·scale over every key."""
    q = trace.arrays["L0.q"][head].astype(np.float64)
    k = trace.arrays["L0.k"][head].astype(np.float64)
    s = q[rows] @ k.T * trace.meta["scale"]  # (r, T)
    s[np.arange(T)[None, :] > np.arange(T)[rows][:, None]] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True))[:, cols]


def _expected(trace, head: int, key) -> np.ndarray:
    level, i, j = key
    s, f = tile_span(level), 1 << level
    return block_max(_exact(trace, head, slice(i * s, min((i + 1) * s, T)), slice(j * s, min((j + 1) * s, T))), f, f)


def _cells(trace) -> int:
    return trace.deferred["L0.probs"].cells  # weights computed by the trace so far


@pytest.mark.parametrize("key", [(1, 20, 11), (1, T // 256, T // 256), (1, T // 256, 3)])  # inside; edge corner, row
def test_a_zoom_in_finds_the_finer_tiles_of_the_block_computed_for_the_coarser_one(trace, key):
    od = OnDemandMap(trace, 0, "self", 0)
    assert od.overview_level == 2
    od.tile(key)
    before = _cells(trace)
    level, i, j = key
    s = tile_span(level)
    rows, cols = (i * s, min((i + 1) * s, T)), (j * s, min((j + 1) * s, T))
    image, pending, missing = od.view(*rows, *cols, 800, 800)  # ≤ 256 rows in 800 px: level 0
    assert image.level == 0 and not missing and not pending.any()
    assert _cells(trace) == before  # nothing asked of the trace: the tiles were kept
    fresh = OnDemandMap(trace, 0, "self", 0)
    for sub in od._tiles:
        if sub[0] == 0:
            np.testing.assert_array_equal(od._tiles[sub], fresh.tile(sub))  # a fresh map's own block: equal
            np.testing.assert_allclose(od._tiles[sub], _expected(trace, 0, sub), atol=1e-6)
    np.testing.assert_allclose(image.image, _exact(trace, 0, slice(*rows), slice(*cols)), atol=1e-6)
    # control: a map without the kept tiles asks the trace for the same view
    assert OnDemandMap(trace, 0, "self", 0).view(*rows, *cols, 800, 800)[2]


@pytest.mark.parametrize("key", [(1, 12, 5), (1, T // 256, T // 256)])
def test_a_zoom_out_pools_the_coarser_tile_from_finer_tiles_kept(trace, key):
    od = OnDemandMap(trace, 0, "self", 1)
    level, i, j = key
    od.tile((0, i, j))  # what a zoom at full resolution computed: the same 256 × 256 block as (1, i, j)
    assert od._tiles.covering(key) is not None
    before = _cells(trace)
    got = od.tile(key)
    assert _cells(trace) == before  # pooled from the kept tiles: no probability computed
    np.testing.assert_array_equal(got, OnDemandMap(trace, 0, "self", 1).tile(key))
    np.testing.assert_allclose(got, _expected(trace, 1, key), atol=1e-6)
    # control: without the finer tile the tile is not pooled (it is computed)
    od._tiles.pop(key)
    od._tiles.pop((0, i, j))
    assert od._tiles.from_finer(key) is None
    od.tile(key)
    assert _cells(trace) > before


@pytest.mark.parametrize("tq", [3 * 512 + 512, 3 * 512 + 300])  # whole blocks; the last block partial
def test_a_level_3_block_gives_every_finer_tile_and_is_pooled_back_from_them(tq):
    """Level 3 (512 × 512 map rows a tile, 4 × 4 tiles of 256 at levels 0-2): at the map's edge and inside."""
    rng = np.random.default_rng(1)
    key = (3, 3, 1)
    block = rng.random((tq - 3 * 512, 512), dtype=np.float32)  # map rows [1536, tq) × columns [512, 1024)
    cache = TileCache(tq, 4096, budget=2**30)
    got = cache.put_block(key, block)
    np.testing.assert_array_equal(got, block_max(block, 8, 8))
    for level in range(3):  # each finer tile: the maximum of its own part of the block
        f = 1 << level
        for a in range(2):
            for b in range(2):
                part = block[a * 256:(a + 1) * 256, b * 256:(b + 1) * 256]
                sub = (level, 6 + a, 2 + b)
                assert (sub in cache) == bool(part.size)
                if part.size:
                    np.testing.assert_array_equal(cache[sub], block_max(part, f, f))
    for sub in [k for k in cache if k[0] > 0]:
        cache.pop(sub)  # only level 0 kept: the level-3 tile pooled from its 256 × 256 tiles
    assert cache.covering(key)[0] == 0
    np.testing.assert_array_equal(cache.from_finer(key), block_max(block, 8, 8))
    cache.pop((0, 6, 3))  # control: one tile of the four missing
    assert cache.covering(key) is None and cache.from_finer(key) is None


def test_want_puts_the_tiles_kept_finer_tiles_cover_first(trace):
    od = OnDemandMap(trace, 0, "self", 0)
    od.tile((0, 4, 4))  # the block of (1, 4, 4): 256 × 256 map rows at both levels
    od.want([(1, 6, 3), (1, 4, 4)])
    assert od.wanted == [(1, 4, 4), (1, 6, 3)]  # (1, 4, 4) is pooled from kept tiles: no wait for (1, 6, 3)
    od2 = OnDemandMap(trace, 0, "self", 0)
    od2.want([(1, 6, 3), (1, 4, 4)])  # control: nothing kept, the order asked
    assert od2.wanted == [(1, 6, 3), (1, 4, 4)]


def test_the_budget_keeps_the_tile_asked_for_and_drops_the_least_recent():
    cache = TileCache(T, T, budget=3 * 256 * 256 * 4)  # three level-0 tiles
    block = np.random.default_rng(0).random((256, 256), dtype=np.float32)
    cache.put_block((2, 1, 1), block)  # level 2: the same 256 × 256 block gives a level-1 and a level-0 tile
    assert list(cache) == [(0, 1, 1), (1, 1, 1), (2, 1, 1)]  # the finer ones older than the tile asked for
    np.testing.assert_array_equal(cache[(2, 1, 1)], block_max(block, 4, 4))
    np.testing.assert_array_equal(cache[(1, 1, 1)], block_max(block, 2, 2))
    for n in range(3):
        cache.put((0, 5, n), block)
    assert (2, 1, 1) not in cache and (0, 5, 2) in cache and cache.bytes <= cache.budget


def test_a_head_change_draws_the_new_heads_tiles_never_the_old_ones(qtbot, trace):
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    sel = Selection()
    view = HeadMapView(selection=sel)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.set_trace(trace)
    r0, c0 = 5000, 4900
    view.heatmap.vb.setRange(xRange=(c0, c0 + 200), yRange=(r0, r0 + 200), padding=0)
    view.ensure_current()  # overview and shown tiles on this thread
    old = view.on_demand
    t = view.tile
    assert t.level == 0 and not [k for k in old.wanted if k in old.visible]  # the ring may still come
    head0 = _exact(trace, 0, slice(t.row0, t.row1), slice(t.col0, t.col1))
    sel.update(head=1)
    view.ensure_current()
    assert view.on_demand is not old and view.on_demand.head == 1
    assert not any(view.on_demand._tiles[k] is old._tiles.get(k) for k in view.on_demand._tiles)
    t = view.tile
    head1 = _exact(trace, 1, slice(t.row0, t.row1), slice(t.col0, t.col1))
    np.testing.assert_allclose(view.tile.image, head1, atol=1e-6)
    assert np.abs(view.tile.image - head0).max() > 1e-3  # control: head 0's tiles would differ
    assert tile_cells(0) == 256

