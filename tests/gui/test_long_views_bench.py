"""``bench --only long``'s head map rows run end to end on a short map (figures printed, never asserted)."""

from __future__ import annotations

import math
import os


def test_head_map_rows_run_and_are_named(qapp, monkeypatch):
    """The bench names a 1920×1080 offscreen screen in ``os.environ``; the test restores it for later tests."""
    from attnviz.bench.long_views import measure_long_views

    before = os.environ.get("QT_QPA_PLATFORM")
    with monkeypatch.context() as env:
        env.setenv("QT_QPA_PLATFORM", before or "offscreen")  # recorded here, so leaving the block restores it
        rows = measure_long_views(T=8192, n_tiles=4, n_frames=6, size=(900, 800), d_head=16)  # above the overview's 4,096
    assert os.environ.get("QT_QPA_PLATFORM") == before  # nothing leaks to later tests
    for path in ("drag", "jump", "zoom"):
        assert rows[f"{path}: frames"] > 0
        assert math.isfinite(rows[f"{path}: frames per second (median wall)"])
    assert math.isfinite(rows["overview fill s (one head, whole map, band by band)"])
    assert "any visible tile ready p95 ms (all paths)" in rows  # zoomed in: tiles were asked for and came


def test_head_map_rows_run_on_a_given_traces_layer_and_head(qapp):
    """A model's own trace (here a two-layer random one) is shown at the layer and head asked, not layer 0."""
    from attnviz.bench.long_views import measure_long_views
    from attnviz.bench.on_demand_traces import on_demand_trace

    trace = on_demand_trace(8192, n_layers=2, n_heads=2, d_head=16)
    asked: list = []
    block = trace.deferred["L1.probs"].block
    trace.deferred["L1.probs"].block = lambda heads=None, rows=None, cols=None: (asked.append(heads),
                                                                                block(heads, rows, cols))[1]
    rows = measure_long_views(n_tiles=2, n_frames=4, size=(900, 800), trace=trace, layer=1, head=1)
    assert rows["T"] == 8192 and rows["head size of q, k"] == 16
    assert asked and all(h == slice(1, 2) for h in asked)  # layer 1's head 1 only
    assert trace.deferred["L0.probs"].cells == 0  # control: layer 0 was never asked
