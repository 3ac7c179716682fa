"""Probabilities recomputed on demand from q, k and each row's log-sum-exp, against an independent full softmax.

The reference builds the whole (H, T, T) score matrix with plain NumPy broadcasting (no ScoreRule code), takes
its softmax, and the block from :class:`OnDemandProbs` must equal it within 1e-6; each rule feature has a
negative control (a wrong normaliser, a dropped bias / cap / window, a wrong key-head mapping must fail).
"""

import numpy as np
import pytest
import torch

from attnviz.capture.attention_kernel import attention_with_lse, chunked_attention, kernel_available
from attnviz.capture.on_demand import OnDemandProbs, ScoreRule, attach, register
from attnviz.capture.trace import Trace

H, HKV, T, DH = 6, 2, 41, 8


def _qk(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(H, T, DH)).astype(np.float32) * 1.5, rng.normal(size=(HKV, T, DH)).astype(np.float32) * 1.5)


def _reference(q, k, scale, causal=False, window=None, softcap=None, bias=None, sinks=None, kv_of=None):
    """Full softmax with the rule written out directly: (H, T, T) float64 probabilities and (H, T) lse."""
    kv_of = (np.arange(H) // (H // HKV)) if kv_of is None else kv_of
    s = np.einsum("htd,hsd->hts", q.astype(np.float64), k.astype(np.float64)[kv_of]) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if bias is not None:
        s = s + bias
    i, j = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
    gone = np.zeros((T, T), bool)
    if causal:
        gone |= j > i
    if window:
        gone |= i - j >= window
    s = np.where(gone, -np.inf, s)
    full = s if sinks is None else np.concatenate([s, np.broadcast_to(sinks[:, None, None], (H, T, 1))], -1)
    top = full.max(-1, keepdims=True)
    lse = (np.log(np.exp(full - top).sum(-1, keepdims=True)) + top)[..., 0]
    return np.exp(s - lse[..., None]), lse.astype(np.float32)


def _alibi_bias(slopes):
    return slopes[:, None, None] * np.arange(T)[None, None, :]


CASES = {
    "plain": {},
    "causal": {"causal": True},
    "window": {"causal": True, "window": 5},
    "softcap": {"causal": True, "softcap": 3.0},
    "sinks": {"causal": True, "sinks": np.linspace(-1, 2, H)},
    "alibi": {"causal": True, "alibi": 2.0 ** -np.arange(1, H + 1)},
    "bias": {"bias": np.random.default_rng(5).normal(size=(H, T, T))},
}


def _case(name):
    kw = dict(CASES[name])
    alibi = kw.pop("alibi", None)
    sinks = kw.pop("sinks", None)
    ref_kw = dict(kw, sinks=sinks)
    if alibi is not None:
        ref_kw["bias"] = _alibi_bias(alibi)
    rule = ScoreRule(scale=0.4, softcap=kw.get("softcap"), causal=kw.get("causal", False), window=kw.get("window"),
                     alibi=alibi, bias=None if kw.get("bias") is None else kw["bias"].astype(np.float32))
    return rule, ref_kw


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("heads,rows,cols", [(None, None, None), ([5, 0], slice(3, 30, 2), [0, 40, 7]), (3, 17, None)])
def test_block_equals_full_softmax(name, heads, rows, cols):
    q, k = _qk()
    rule, ref_kw = _case(name)
    want, lse = _reference(q, k, 0.4, **ref_kw)
    got = OnDemandProbs(q, k, lse, rule).block(heads, rows, cols)
    sel = [np.arange(n)[s] if isinstance(s, slice) else np.atleast_1d(np.arange(n) if s is None else s)
           for s, n in zip((heads, rows, cols), want.shape)]
    np.testing.assert_allclose(got, want[np.ix_(*sel)], rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["causal", "window", "softcap", "alibi", "bias"])
def test_negative_controls_fail(name):
    q, k = _qk()
    rule, ref_kw = _case(name)
    want, lse = _reference(q, k, 0.4, **ref_kw)
    assert np.abs(OnDemandProbs(q, k, lse, rule).full() - want).max() <= 1e-6  # the control's positive half
    wrong_norm = OnDemandProbs(q, k, lse + 0.01, rule).full()  # a wrong normaliser
    assert np.abs(wrong_norm - want).max() > 1e-4
    kv_swapped = OnDemandProbs(q, k[::-1].copy(), lse, rule).full()  # a wrong key/value-head mapping
    assert np.abs(kv_swapped - want).max() > 1e-3
    dropped = ScoreRule(scale=rule.scale)  # what the model adds left out
    if name in ("causal", "window"):
        dropped = ScoreRule(scale=rule.scale, causal=name == "window")  # window (or causal rule) dropped
    assert np.abs(OnDemandProbs(q, k, lse, dropped).full() - want).max() > 1e-3


def test_t5_buckets_equal_transformers():
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    from attnviz.capture.on_demand import t5_buckets

    rel = torch.arange(-300, 300)
    for bidirectional in (True, False):
        want = t5.T5Attention._relative_position_bucket(rel, bidirectional=bidirectional, num_buckets=32,
                                                        max_distance=128).numpy()
        np.testing.assert_array_equal(t5_buckets(rel.numpy(), bidirectional, 32, 128), want)
        # negative control: another max_distance buckets differently
        assert not np.array_equal(t5_buckets(rel.numpy(), bidirectional, 32, 64), want)


def test_trace_dispatch_save_and_load_round_trip(tmp_path):
    q, k = _qk()
    rule, ref_kw = _case("window")
    want, lse = _reference(q, k, 0.4, **ref_kw)
    arrays, meta = {"L0.q": q, "L0.k": k}, {"n_layers": 1, "n_heads": H, "n_kv_heads": HKV, "kind": "decoder",
                                            "scale": 0.4}
    register(arrays, meta, "L0.", lse, rule)
    deferred = {}
    attach(arrays, meta, deferred)
    t = Trace(tokens=[f"t{i}" for i in range(T)], meta=meta, arrays=arrays, deferred=deferred)
    assert "L0.probs" not in t.arrays and t.probs_shape(0) == (H, T, T)
    np.testing.assert_allclose(t.probs(0, heads=[1], rows=slice(10, 20)), want[[1], 10:20], atol=1e-6, rtol=0)
    np.testing.assert_allclose(t.row("L0.probs", 7), want[:, 7], atol=1e-6, rtol=0)
    np.testing.assert_array_equal(np.isneginf(t["L0.mask"]), want[0] == 0)  # masked cells: probability 0
    path = tmp_path / "long.npz"
    t.save(path)
    with np.load(path) as data:
        assert "L0.probs" not in data.files and "L0.lse" in data.files  # the ingredients, not the T×T map
    back = Trace.load(path)
    assert "L0.probs" in back.deferred
    np.testing.assert_array_equal(back.probs(0), t.probs(0))
    pooled, rs, cs = back.pooled_probs(0, head=2, max_rows=8, max_cols=8, chunk_rows=6)
    assert pooled.max() == pytest.approx(want[2].max(), abs=1e-6)


@pytest.mark.skipif(not kernel_available(), reason="this torch has no CPU flash kernel with log-sum-exp")
@pytest.mark.parametrize("causal,mask", [(False, None), (True, None), (False, "bool"), (True, "float")])
def test_kernel_lse_equals_chunked_fallback(causal, mask):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, n, 70, 16, generator=g) for n in (6, 2, 2))
    m = None
    if mask == "bool":
        m = torch.rand(70, 70, generator=g) > 0.2
        m[:, 0] = True
    elif mask == "float":
        m = torch.randn(1, 6, 70, 70, generator=g)
    out, lse = attention_with_lse(q, k, v, 0.3, causal, m)
    out2, lse2 = chunked_attention(q, k, v, 0.3, causal, m, chunk_cells=6 * 70 * 11)
    assert (lse - lse2).abs().max() <= 2e-6 and (out - out2).abs().max() <= 2e-6
    # negative control: the fallback without the causal rule is another attention
    if causal:
        assert (chunked_attention(q, k, v, 0.3, False, m)[1] - lse).abs().max() > 1e-2
    # and the lse is the log-sum-exp of the scores a plain softmax normalises
    s = (q @ torch.repeat_interleave(k, 3, dim=1).transpose(-1, -2)) * 0.3
    if m is not None:
        s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m
    if causal:
        s = s.masked_fill(torch.ones(70, 70, dtype=torch.bool).triu(1), float("-inf"))
    assert (torch.logsumexp(s, -1) - lse).abs().max() <= 2e-6


@pytest.mark.skipif(not kernel_available(), reason="this torch has no CPU flash kernel with log-sum-exp")
def test_kernel_reads_grouped_keys_without_copies(monkeypatch):
    """Grouped-query attention goes to the kernel with H_kv heads (no repeat copy) when the kernel maps heads as
    repeat_interleave does, and gives what the repeated call gives; a kernel that does not keeps the copy."""
    import attnviz.capture.attention_kernel as ak

    g = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(1, 9, 40, 16, generator=g), torch.randn(1, 3, 40, 16, generator=g), \
        torch.randn(1, 3, 40, 16, generator=g)
    want = attention_with_lse(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1), 0.25, True)
    assert ak._kernel_takes_gqa(ak._kernel())  # this torch's kernel reads H_kv heads itself
    copies = []
    real = ak._repeat_kv
    monkeypatch.setattr(ak, "_repeat_kv", lambda t, n: copies.append(n) or real(t, n))
    got = attention_with_lse(q, k, v, 0.25, True)
    assert copies == [] and torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    # a kernel that cannot: the copies are made, same answer
    monkeypatch.setattr(ak, "_GQA", [False])
    again = attention_with_lse(q, k, v, 0.25, True)
    assert copies == [3, 3] and torch.equal(again[0], want[0])
    # negative control: another head mapping (query head h reads kv head h % 3) is another attention
    tiled = attention_with_lse(q, k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1), 0.25, True)
    assert (tiled[1] - want[1]).abs().max() > 1e-3
