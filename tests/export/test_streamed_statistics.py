"""heads_of_interest and the attention-distance figure data read a long trace in row blocks, never whole maps.

The trace's maps exist only as blocks and raise if asked whole (attnviz.bench.on_demand_traces); the numbers
are checked against entropy and distance written out here on the same trace's full maps (built from the
blocks of a copy that allows it)."""

import numpy as np
import pytest

from attnviz.bench.on_demand_traces import WholeMapAsked, on_demand_trace
from attnviz.export.batch import heads_of_interest
from attnviz.export.data import figure_data
from attnviz.selection import SelectionState

T, LAYERS, HEADS = 2048, 2, 4


def _full_maps():
    """(L, H, T, T) float64: the same trace's maps, whole (the copy that allows it)."""
    full = on_demand_trace(T, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2, allow_full=True)
    return np.stack([full.deferred[f"L{i}.probs"].full().astype(np.float64) for i in range(LAYERS)])


@pytest.fixture(scope="module")
def maps():
    return _full_maps()


def _entropy(P):
    """(L, H) mean over rows of -Σ p log p (0 log 0 = 0)."""
    logp = np.log(np.where(P > 0, P, 1.0))
    return -(P * logp).sum(-1).mean(-1)


def test_heads_of_interest_streams_and_picks_the_lowest_entropy(maps):
    trace = on_demand_trace(T, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2)
    with pytest.raises(WholeMapAsked):  # the control: asking this trace for a whole map fails loudly
        trace.all_probs()
    got = heads_of_interest(trace, n=3)
    ent = _entropy(maps)
    want = [tuple(int(v) for v in np.unravel_index(i, ent.shape)) for i in np.argsort(ent, axis=None)[:3]]
    assert got == want
    assert len({round(float(ent[l, h]), 6) for l, h in got}) == 3  # distinct entropies: the order is meaningful


def test_distance_figure_data_streams_and_equals_the_whole_map(maps):
    trace = on_demand_trace(T, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2)
    data = figure_data("attention-distance", trace, SelectionState(layer=0, head=0))
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    want_dist = (maps * np.abs(i - j)).sum(-1).mean(-1)  # (L, H): tokens
    np.testing.assert_allclose(data.arrays["mean_distance"], want_dist, rtol=1e-6)
    np.testing.assert_allclose(data.arrays["entropy"], _entropy(maps), rtol=1e-6)
    # negative control: a map one row off (the distance of row i measured from i + 1) differs
    shifted = (maps * np.abs(i + 1 - j)).sum(-1).mean(-1)
    assert not np.allclose(data.arrays["mean_distance"], shifted, rtol=1e-3)


def _rollout_written_out(maps, residual=0.5):
    """Rollout of (L, H, T, T) maps as the paper states it: Â_l = rownorm((1 − r)·mean_h A_l + r·I), Â_L ⋯ Â_0."""
    eye = np.eye(maps.shape[-1])
    out = eye
    for layer in maps:
        a = (1 - residual) * layer.mean(0) + residual * eye
        out = (a / a.sum(1, keepdims=True)) @ out
    return out


def test_rollout_figure_data_of_a_long_trace_is_the_query_row_streamed(monkeypatch):
    import attnviz.analysis.rollout_row as rollout_row

    monkeypatch.setattr(rollout_row, "LONG_ROLLOUT_T", 256)  # "long" from 257 tokens: a small map to check
    n = 300
    trace = on_demand_trace(n, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2)
    with pytest.raises(WholeMapAsked):  # the control: this trace refuses whole maps
        trace.all_probs()
    data = figure_data("rollout", trace, SelectionState(layer=0, head=0, query=123))
    full = on_demand_trace(n, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2, allow_full=True)
    maps = np.stack([full.deferred[f"L{i}.probs"].full().astype(np.float64) for i in range(LAYERS)])
    want = _rollout_written_out(maps)[123]
    assert data.main == "rollout_row" and data.arrays["rollout_row"].shape == (1, n)
    assert data.rows == ["tok123 [123]"] and int(data.arrays["rollout_query"]) == 123
    np.testing.assert_allclose(data.arrays["rollout_row"][0], want, rtol=1e-5, atol=1e-7)
    # negative control: the layers multiplied in the other order (Â_0 · Â_1) give another row
    assert not np.allclose(_rollout_written_out(maps[::-1])[123], want, rtol=1e-3, atol=1e-6)


def test_rollout_figure_data_of_a_short_trace_is_the_whole_product():
    n = 200
    trace = on_demand_trace(n, n_layers=LAYERS, n_heads=HEADS, n_kv_heads=2, allow_full=True)
    maps = np.stack([trace.deferred[f"L{i}.probs"].full().astype(np.float64) for i in range(LAYERS)])
    data = figure_data("rollout", trace, SelectionState(layer=0, head=0))
    assert data.main == "rollout" and data.arrays["rollout"].shape == (n, n)
    np.testing.assert_allclose(data.arrays["rollout"], _rollout_written_out(maps), rtol=1e-5, atol=1e-7)
