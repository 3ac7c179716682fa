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
