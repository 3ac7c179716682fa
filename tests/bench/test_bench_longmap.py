"""The long-map benchmark's measuring code runs (on a small map; the figures are printed, never asserted)."""

from __future__ import annotations

import os

import numpy as np


def test_long_map_bench_runs_on_a_small_map(qapp, monkeypatch):
    """The bench names a 1920×1080 offscreen screen in ``os.environ`` (``use_headless_screen``); the test
    undoes it, or later tests' child processes inherited that screen (and passed or failed by test order)."""
    from attnviz.bench.longmap import _causal_attention, measure_long_map

    before = os.environ.get("QT_QPA_PLATFORM")
    with monkeypatch.context() as env:
        env.setenv("QT_QPA_PLATFORM", before or "offscreen")  # recorded here, so leaving the block restores it
        _run_long_map(_causal_attention, measure_long_map)
    assert os.environ.get("QT_QPA_PLATFORM") == before  # nothing leaks to later tests


def _run_long_map(_causal_attention, measure_long_map):
    a = _causal_attention(64, block=16).astype(np.float64)
    np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=2e-3)
    assert np.all(np.triu(a, 1) == 0)  # causal: no query sees a later key
    out = measure_long_map(T=256, n_frames=6, size=(200, 160))
    assert out["T"] == 256 and out["frame median ms"] > 0 and out["map GB (float16)"] == 256 * 256 * 2 / 1e9
    # above 1,024 tokens the app's head map view draws from its pyramid, coarser when zoomed out
    out = measure_long_map(T=1100, n_frames=6, size=(300, 240))
    assert len(out["levels drawn"].split()) > 1  # the level follows the zoom
    assert out["pyramid extra GB"] > 0


# the on-demand head map's rows (bench/long_views.py) are run by tests/gui/test_long_views_bench.py
