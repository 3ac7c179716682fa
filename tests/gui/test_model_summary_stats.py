"""The All heads grid's statistics walk the layers once (one float64 copy per layer for both analyses):
the numbers are exactly those of the analyses run on the whole trace, and match a numpy recomputation."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis import attention_entropy, mean_attention_distance
from attnviz.bench.traces import sample_trace
from attnviz.gui.views.model_summary import summarize_stats


@pytest.mark.parametrize("kind, part", [("encoder", "self"), ("decoder", "self"), ("vit", "self"),
                                        ("encoder-decoder", "enc"), ("encoder-decoder", "self"),
                                        ("encoder-decoder", "cross")])
def test_stats_are_the_analyses_of_the_whole_trace(kind, part):
    trace = sample_trace(kind, T=9, n_layers=3)
    stats = summarize_stats(trace, part)
    whole = trace if part == "self" else trace.all_probs(part)
    np.testing.assert_array_equal(stats.entropy, attention_entropy(whole))
    if part == "cross":
        assert stats.distance is None
    else:
        np.testing.assert_array_equal(stats.distance, mean_attention_distance(whole))
    assert stats.distance_unit == ("" if part == "cross" else "px" if kind == "vit" else "tokens")


def test_text_stats_match_numpy():
    trace = sample_trace("encoder", T=7, n_layers=2)
    stats = summarize_stats(trace)
    idx = np.arange(7)
    for layer in range(2):
        p = trace[f"L{layer}.probs"].astype(np.float64)
        ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(-1).mean(-1)
        np.testing.assert_allclose(stats.entropy[layer], ent, rtol=1e-12)
        dist = (p * np.abs(idx[:, None] - idx[None, :])).sum(-1).mean(-1)
        np.testing.assert_allclose(stats.distance[layer], dist, rtol=1e-12)


def test_halves_joined_equal_the_whole():
    from attnviz.gui.views.model_summary import join_stats

    trace = sample_trace("vit", n_layers=5)
    whole = summarize_stats(trace)
    joined = join_stats(summarize_stats(trace, layers=range(3)), summarize_stats(trace, layers=range(3, 5)))
    np.testing.assert_array_equal(joined.entropy, whole.entropy)
    np.testing.assert_array_equal(joined.distance, whole.distance)
    assert joined.distance_unit == "px"
    failed = ValueError("no")
    assert join_stats(whole, failed) is failed


def _long_view(qtbot):
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from attnviz.gui.views.model_view import INLINE_STATS, ModelView
    from attnviz.selection import Selection

    trace = sample_trace("encoder", T=48, n_layers=5, n_heads=12, d_model=48)
    assert 5 * 12 * 48 * 48 > INLINE_STATS  # statistics on workers, not inline
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    return view, trace


def test_a_long_trace_statistics_come_from_two_workers_and_equal_the_whole(qtbot):
    view, trace = _long_view(qtbot)
    view.set_trace(trace)
    assert view.stats is None and view.background_pending and not view.canvas.updatesEnabled()
    qtbot.waitUntil(lambda: not view.background_pending, timeout=20000)
    whole = summarize_stats(trace)
    np.testing.assert_array_equal(view.stats.entropy, whole.entropy)
    np.testing.assert_array_equal(view.stats.distance, whole.distance)
    assert view.canvas.updatesEnabled() and view.note_text(4, 11) == f"{whole.entropy[4, 11]:.2f} · {whole.distance[4, 11]:.1f}"


def test_an_export_finishes_both_halves_at_once_and_newer_traces_win(qtbot):
    view, trace = _long_view(qtbot)
    other = sample_trace("encoder", T=48, n_layers=5, n_heads=12, d_model=48, seed=3)
    view.set_trace(trace)
    view.set_trace(other)  # the first trace's halves are never shown
    view.ensure_current()
    assert not view.background_pending and view.canvas.updatesEnabled()
    np.testing.assert_array_equal(view.stats.entropy, summarize_stats(other).entropy)
    from attnviz.gui.workers import background_lane, views_lane

    # both traces' halves may still be running on the two lanes: once both lanes have ended them, their
    # outcomes must have been dropped, not drawn
    qtbot.waitUntil(lambda: not views_lane().busy and not background_lane().busy, timeout=20000)
    np.testing.assert_array_equal(view.stats.entropy, summarize_stats(other).entropy)
