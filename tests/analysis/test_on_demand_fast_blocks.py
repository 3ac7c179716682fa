"""The fast block path of OnDemandProbs: float32 with a float64 fix where float32 could miss by 1e-6, and
blocked sub-blocks never computed. Checked against an independent float64 softmax written out here."""

import numpy as np
import pytest

import attnviz.capture.on_demand as od
from attnviz.capture.on_demand import OnDemandProbs, ScoreRule


def _reference(q, k, scale, group, causal=True, bias=None):
    """(H, T, T) float64 probabilities and (H, T) lse of causal softmax(q·kᵀ·scale + bias), from scratch."""
    s = np.einsum("htd,hsd->hts", q.astype(np.float64), np.repeat(k.astype(np.float64), group, axis=0)) * scale
    if bias is not None:
        s = s + bias
    T = q.shape[1]
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool))[None], s, -np.inf)
    top = s.max(-1, keepdims=True)
    lse = np.log(np.exp(s - top).sum(-1, keepdims=True)) + top
    return np.exp(s - lse), lse[..., 0]


def _peaked(T=300, d=128, H=4, Hkv=2, seed=3):
    """Large scores (|s| up to ~90) and rows dominated by one key: where float32's rounding of s exceeds 1e-6
    (the tests pass each row's lse in float64: a float32 lse of ~50 alone rounds p by up to 2e-6)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(H, T, d)).astype(np.float32) * 3.0
    k = rng.normal(size=(Hkv, T, d)).astype(np.float32) * 3.0
    k[:, 0] = q[0, 5] * 0.8  # a strong sink for some rows
    return q, k, 1.0 / np.sqrt(d)


def test_large_scores_stay_within_1e6_of_float64():
    q, k, scale = _peaked()
    want, lse = _reference(q, k, scale, 2)
    probs = OnDemandProbs(q, k, lse, ScoreRule(scale=scale, causal=True))
    got = probs.block(None, slice(100, 300), slice(0, 300))
    assert want[:, 100:].max() > 0.99  # peaked rows: large weights, where float32 rounding matters
    assert np.abs(got - want[:, 100:]).max() <= 1e-6


def test_without_the_float64_fix_the_error_exceeds_1e6(monkeypatch):
    """Negative control: the same block with the fix disabled (float32 only) misses by more than 1e-6."""
    q, k, scale = _peaked()
    want, lse = _reference(q, k, scale, 2)
    monkeypatch.setattr(od, "_DOT_TOL", np.inf)
    got = OnDemandProbs(q, k, lse, ScoreRule(scale=scale, causal=True)).block(
        None, slice(100, 300), slice(0, 300))
    assert np.abs(got - want[:, 100:]).max() > 1e-6


def test_alibi_large_bias_stays_exact():
    q, k, scale = _peaked(T=200, d=64)
    slopes = 2.0 ** -np.arange(1, 5)
    bias = slopes[:, None, None] * np.arange(200)[None, None, :]
    want, lse = _reference(q, k, scale, 2, bias=bias)
    got = OnDemandProbs(q, k, lse, ScoreRule(scale=scale, causal=True, alibi=slopes)).block(
        [3, 0], slice(50, 200), slice(0, 200, 3))
    assert np.abs(got - want[[3, 0]][:, 50:, ::3]).max() <= 1e-6


def test_blocked_sub_blocks_are_not_computed(monkeypatch):
    """A causal block above the diagonal is zeros without computing; one across it computes about half its
    cells; the values equal the full softmax either way (including a window that blocks the far left)."""
    T = 512
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, T, 16)).astype(np.float32)
    k = rng.normal(size=(1, T, 16)).astype(np.float32)
    want, lse = _reference(q, k, 0.25, 2)
    computed = []
    real = OnDemandProbs._chunk

    def counting(self, qq, keys, hs, r, c, lse_rows, tk, qk_top):
        computed.append(len(hs) * len(r) * len(c))
        return real(self, qq, keys, hs, r, c, lse_rows, tk, qk_top)

    monkeypatch.setattr(OnDemandProbs, "_chunk", counting)
    probs = OnDemandProbs(q, k, lse, ScoreRule(scale=0.25, causal=True))
    above = probs.block(None, slice(0, 256), slice(256, 512))
    assert not computed and not above.any()
    diag = probs.block(None, slice(0, 512), slice(0, 512))
    assert 0.45 * diag.size < sum(computed) < 0.65 * diag.size
    np.testing.assert_allclose(diag, want, rtol=0, atol=1e-6)
    # unsorted columns: nothing skipped, still exact
    cols = np.array([300, 2, 511, 40])
    np.testing.assert_allclose(probs.block(1, slice(0, 512), cols), want[[1]][:, :, cols], rtol=0, atol=1e-6)
    # a window: the columns before it are skipped as well
    w = 64
    s = np.einsum("htd,hsd->hts", q.astype(np.float64), np.repeat(k, 2, 0).astype(np.float64)) * 0.25
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    s = np.where((j <= i) & (i - j < w), s, -np.inf)
    lse_w = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    want_w = np.exp(s - lse_w[..., None])
    computed.clear()
    got = OnDemandProbs(q, k, lse_w, ScoreRule(scale=0.25, causal=True, window=w)).block(
        None, slice(256, 512), None)
    assert sum(computed) < 0.35 * got.size
    np.testing.assert_allclose(got, want_w[:, 256:], rtol=0, atol=1e-6)


@pytest.mark.parametrize("heads", [[0, 1, 2, 3], [3, 1], [2]])
def test_query_heads_read_their_key_head(heads):
    """Grouped-query: heads sharing a key head are computed together and still read the right one."""
    q, k, scale = _peaked(T=64, d=32)
    want, lse = _reference(q, k, scale, 2)
    got = OnDemandProbs(q, k, lse, ScoreRule(scale=scale, causal=True)).block(heads)
    np.testing.assert_allclose(got, want[heads], rtol=0, atol=1e-6)
    # control: a wrong mapping (every head reading key head 0) is far off
    wrong = OnDemandProbs(q, np.repeat(k[:1], 2, 0), lse, ScoreRule(scale=scale, causal=True))
    if any(h >= 2 for h in heads):
        assert np.abs(wrong.block(heads) - want[heads]).max() > 1e-3
