"""The All heads grid of a long input: every head's map recomputed from q and k block by block on the views'
worker (never a whole map), its thumbnails and statistics equal to those of the whole maps."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.bench.on_demand_traces import on_demand_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def test_a_long_grid_is_pooled_on_a_worker_and_equals_the_whole_maps(qtbot):
    from attnviz.gui.views.model_summary import summarize_stats, summarize_thumbnails
    from attnviz.gui.views.model_view import ModelView

    T = 3000
    trace = on_demand_trace(T, n_layers=2, n_heads=2, d_head=8)  # its whole maps raise WholeMapAsked
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.show()
    view.set_trace(trace)
    assert view.thumbs is None and "computing every head's map from q and k" in view.title_item.text  # queued
    qtbot.waitUntil(lambda: view.stats is not None or "unavailable" in view.title_item.text, timeout=600_000)
    assert "unavailable" not in view.title_item.text
    assert view.thumbs.images.shape[:2] == (2, 2)
    # the reference: the same trace allowed to build its whole maps (float64 statistics of whole maps)
    whole = on_demand_trace(T, n_layers=2, n_heads=2, d_head=8, allow_full=True)
    from attnviz.analysis.distance import attention_entropy, mean_attention_distance

    maps = [whole.probs(i).astype(np.float64) for i in range(2)]
    np.testing.assert_allclose(view.stats.entropy, attention_entropy(maps), rtol=0, atol=1e-6)
    # distances of ~850 tokens: float32 probabilities of a block and of a whole map round apart by ~3e-9 of it
    np.testing.assert_allclose(view.stats.distance, mean_attention_distance(maps), rtol=1e-8, atol=1e-6)
    np.testing.assert_array_equal(view.thumbs.images, summarize_thumbnails(whole).images)
    assert summarize_stats(trace).entropy.shape == (2, 2)


def test_stats_of_another_input_differ():  # negative control: the comparison above can fail
    from attnviz.gui.views.model_summary import summarize_stats

    a = summarize_stats(on_demand_trace(600, n_layers=1, n_heads=2, d_head=8, seed=0, allow_full=True))
    b = summarize_stats(on_demand_trace(600, n_layers=1, n_heads=2, d_head=8, seed=1, allow_full=True))
    assert np.abs(a.entropy - b.entropy).max() > 1e-3


def test_a_long_grid_says_how_many_heads_are_done(qtbot, monkeypatch):
    """While every head's map is recomputed the title counts the heads done (after each layer), then the grid's
    own title replaces it."""
    from attnviz.gui.views import all_heads_work, model_view

    titles = []
    real = model_view.set_title
    for module in (model_view, all_heads_work):  # the grid's titles; the background work's (its progress)
        monkeypatch.setattr(module, "set_title", lambda item, text, *a, **k: (titles.append(text), real(item, text, *a, **k)))
    view = model_view.ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.show()
    view.set_trace(on_demand_trace(3000, n_layers=3, n_heads=2, d_head=8))
    qtbot.waitUntil(lambda: view.stats is not None, timeout=600_000)
    counts = [t.split(": ")[-1] for t in titles if "heads done" in t]
    assert counts == ["2 of 6 heads done…", "4 of 6 heads done…", "6 of 6 heads done…"], titles
    assert "heads done" not in titles[-1]  # the finished grid's title


def test_a_dropped_grid_stops_computing():
    """The progress hook stops the pooling between layers (a new trace or model drops the job): later layers
    are never recomputed; without the stop every layer is (the control)."""
    from attnviz.gui.views.model_summary import pool_maps

    trace = on_demand_trace(3000, n_layers=3, n_heads=2, d_head=8)
    asked = []
    probs = trace.probs
    trace.probs = lambda layer, *a, **k: (asked.append(layer), probs(layer, *a, **k))[1]

    def stop(done, n):
        raise InterruptedError("superseded")
    try:
        pool_maps(trace, progress=stop)
    except InterruptedError:
        pass
    assert set(asked) == {0}
    asked.clear()
    pool_maps(trace, progress=lambda d, n: None)
    assert set(asked) == {0, 1, 2}
