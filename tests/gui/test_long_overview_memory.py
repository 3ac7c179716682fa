"""A long head's overviews are streamed in bands bounded in rows × keys, whatever the pooling.

At 131,072 tokens the All heads thumbnail pools 2,048 × 2,048 positions a cell; its bands were whole pooling
rows (2,048 × 131,072 weights, 1 GB in float32 and ~10 GB with the float64 statistics) and the app grew to
10.8 GB. Checked: a map folded band by band with cuts anywhere equals its block maxima; a head's overview keeps
its peak (tracemalloc) under a bound that one whole pooling row of weights alone exceeds (the control); the
head map's overview bands stay under BAND_CELLS (control: the band before the bound was larger)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.heatmap_data import block_max, block_max_into


def test_bands_cut_anywhere_fold_to_the_block_maxima():
    rng = np.random.default_rng(0)
    a = rng.random((101, 53)).astype(np.float32)
    kr, kc = 7, 5
    want = block_max(a, kr, kc)
    for cuts in ([0, 101], [0, 3, 4, 50, 101], list(range(0, 101, 2)) + [101], [0, 14, 21, 100, 101]):
        got = np.zeros_like(want)
        for r0, r1 in zip(cuts[:-1], cuts[1:]):
            block_max_into(got, a[r0:r1], r0, kr, kc)
        np.testing.assert_array_equal(got, want)
    # control: a band folded at the wrong first row lands in other cells
    wrong = np.zeros_like(want)
    block_max_into(wrong, a[:50], 3, kr, kc)
    block_max_into(wrong, a[50:], 50, kr, kc)
    assert not np.array_equal(wrong, want)


def _peak(fn) -> int:
    """Traced peak of ``fn``; tracemalloc counts every thread, so an earlier test's background work still running
    in the whole suite (43 MiB once against a 40 MiB bound) is waited for first."""
    import gc
    import threading
    import time

    from attnviz.gui.lane import all_lanes

    end = time.monotonic() + 60
    while time.monotonic() < end and (any(lane.busy for lane in all_lanes())
                                      or threading.active_count() > 1 and _others_running()):
        time.sleep(0.05)
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _others_running() -> bool:
    """Whether a non-daemon thread besides this one is alive (a worker of an earlier test)."""
    import threading

    return any(t is not threading.current_thread() and t.is_alive() and not t.daemon for t in threading.enumerate())


def test_a_heads_overview_peak_stays_bounded_when_a_pooling_row_is_large():
    from attnviz.analysis.head_overview import head_overview

    T = 4096
    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=8)
    kr = -(-T // 2)  # thumb_px=2: 2,048 rows a cell, as a 64-cell thumbnail of 131,072 tokens
    bound = 96 << 20
    got = []
    peak = _peak(lambda: got.append(head_overview(trace, 0, "self", 0, thumb_px=2)))
    assert peak < bound, f"overview peak {peak / 2**20:.0f} MiB"
    whole = np.concatenate([trace.probs(0, "self", heads=0, rows=slice(r, r + 512))[0] for r in range(0, T, 512)])
    np.testing.assert_array_equal(got[0].pooled, block_max(whole, kr, kr))
    # control: one whole pooling row of weights (what a band was) with its float64 copy exceeds the bound
    assert _peak(lambda: trace.probs(0, "self", heads=0, rows=slice(0, kr)).astype(np.float64)) > bound


def test_head_map_overview_bands_stay_under_band_cells(monkeypatch):
    import attnviz.gui.views.on_demand_map as odm

    trace = on_demand_trace(4096, n_layers=1, n_heads=1, d_head=8)
    monkeypatch.setattr(odm, "BAND_CELLS", 1 << 16)  # 16 rows of 4,096 keys
    od = odm.OnDemandMap(trace, 0, "self", 0)
    sizes, block = [], od.block

    def spy(rows, cols):
        out = block(rows, cols)
        sizes.append(out.size)
        return out
    od.block = spy
    for _ in od.fill_overview():
        pass
    assert od.overview_done and max(sizes) <= 1 << 16
    # control: the rows a band had before the bound (BAND_ROWS) are over it at these keys
    assert odm.BAND_ROWS * 4096 > 1 << 16


def test_the_grids_mask_cells_are_streamed_in_bounded_bands():
    """The All heads grid of a long input pools which cells the mask blocks wholly; it asked the mask for whole
    pooling rows (2,048 × 131,072 cells, ~3.5 GB with their temporaries: the app grew to 4.8 GB at 131,072 tokens).
    Checked: the same cells as block_all of the whole mask, with a tracemalloc peak under a bound that one
    pooling row of the mask alone exceeds (the control)."""
    from attnviz.gui.views.heatmap_data import block_all
    from attnviz.analysis.head_overview import pooled_mask

    from types import SimpleNamespace

    from attnviz.capture.on_demand import OnDemandMask, ScoreRule

    T = 4096
    mask = OnDemandMask(ScoreRule(scale=1.0, causal=True), T, T)  # a long causal trace's deferred mask
    trace = SimpleNamespace(arrays={}, deferred={"L0.mask": mask})
    kr = T // 2  # 2 pooled rows: a pooling row is 2,048 × 4,096 cells
    bound = 40 << 20
    got = []
    peak = _peak(lambda: got.append(pooled_mask(trace, "self", kr, kr, kr)))
    assert peak < bound, f"mask pooling peak {peak / 2**20:.0f} MiB"
    want = block_all(np.isneginf(np.concatenate([mask.block(rows=slice(r, r + 256)) for r in range(0, T, 256)])), kr, kr)
    np.testing.assert_array_equal(got[0], want)
    assert want.any() and not want.all()  # the causal mask blocks the upper-right cell wholly, not the others
    assert _peak(lambda: np.isneginf(mask.block(rows=slice(0, kr)))) > bound  # control: one pooling row
