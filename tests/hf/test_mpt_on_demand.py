"""MPT (ALiBi, optionally clamped q/k/v, its own attention code) on demand: the fast capture keeps q, k, each row's
log-sum-exp and a rule with one slope per head read from the bias the model built; every block equals the model's
own eager probabilities (output_attentions) within 1e-6. Controls that must fail: ALiBi dropped, the slopes in
the wrong head order, a wrong normaliser, the clamp ignored. Long inputs go on demand by themselves."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.on_demand import ON_DEMAND_T, OnDemandProbs, ScoreRule
from attnviz.hf.capture import capture_hf

from .on_demand_check import MPT, TOL, Pairs, assert_auto_goes_on_demand, assert_blocks_equal
from .tiny_models import tokens_of

NAMES = MPT


@pytest.fixture(scope="module")
def pair():
    return Pairs()


@pytest.mark.parametrize("name", NAMES)
def test_on_demand_blocks_equal_the_models_own(pair, name):
    _, _, ref, fast = pair(name)
    notice = fast.meta.get("notice", "")
    assert "did not reproduce" not in notice
    # clamped q/k/v are not W·x: the projections are left out and the trace says so (q, k, v themselves are kept)
    assert ("not captured: W_Q, W_K, W_V" in notice) == (name == "mpt_clip")
    assert_blocks_equal(fast, ref)
    assert all(fast.meta["on_demand"][f"L{i}."]["causal"] for i in range(len(ref.attentions)))
    assert "L0.score_alibi" in fast.arrays
    assert not [k for k in fast.arrays if k.endswith((".bias", ".score_bias", ".score_blocked_bits"))]


def test_slopes_are_the_models_own_in_its_head_order(pair):
    """Six heads: MPT's slopes 2^(−8k/8) for 8 heads, odd ones first, cut to six (not Bloom's order)."""
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    _, _, _, fast = pair("mpt_clip")
    want = -build_mpt_alibi_tensor(6, 64)[:, 0, -2].numpy()  # slope · (j − (L−1)) one key before the last
    np.testing.assert_array_equal(fast["L0.score_alibi"], want)
    assert len(set(want.tolist())) == 6 and not np.all(np.diff(want) < 0)  # interleaved: order matters


def _rule(fast, prefix, **change):
    facts = fast.meta["on_demand"][prefix]
    kw = dict(scale=facts["scale"], causal=facts["causal"], alibi=fast.arrays.get(prefix + "score_alibi"))
    return ScoreRule(**{**kw, **change})


@pytest.mark.parametrize("name", NAMES)
def test_negative_controls_fail(pair, name):
    _, _, ref, fast = pair(name)
    want = ref.attentions[1][0].numpy()
    q, k, lse = fast["L1.q"], fast["L1.k"], fast["L1.lse"]
    slopes = fast["L1.score_alibi"]
    assert np.abs(OnDemandProbs(q, k, lse, _rule(fast, "L1.")).full() - want).max() <= TOL
    bad = {"ALiBi dropped": OnDemandProbs(q, k, lse, _rule(fast, "L1.", alibi=None)),
           "slopes in the wrong head order": OnDemandProbs(q, k, lse, _rule(fast, "L1.", alibi=slopes[::-1].copy())),
           "wrong normaliser": OnDemandProbs(q, k, lse + 0.05, _rule(fast, "L1."))}
    for what, probs in bad.items():
        assert np.abs(probs.full() - want).max() > 1e-3, what


def test_the_clamp_enters_the_reading(monkeypatch, pair):
    """With clip_qkv the model clamps q, k, v; a reading that ignores the clamp gives other q and k, and the
    capture's own check (p·v = the model's output at three rows) refuses it in one line."""
    import attnviz.hf.mpt_attention as mpt
    from attnviz.errors import InputError

    model, inputs, _, _ = pair("mpt_clip")
    with torch.no_grad():
        fused = model.transformer.blocks[0].attn.Wqkv(torch.randn(1, 4, 48))
    assert bool((fused.abs() > 0.5).any())  # the clamp bites on these weights
    monkeypatch.setattr(mpt, "_clamped", lambda module, fused: fused)
    with pytest.raises(InputError, match="do not give the output the model computed"):
        capture_hf(model, inputs, tokens_of(inputs, model), attention="on_demand")


def test_short_inputs_keep_the_models_own_maps_and_their_arrays(pair):
    """Below the on-demand length the model's own probabilities are kept, with q, k, v and W read by the hooks."""
    model, inputs, ref, _ = pair("mpt")
    trace = capture_hf(model, inputs, tokens_of(inputs, model))
    assert trace.meta["qkv_available"] and "L0.probs" in trace.arrays
    np.testing.assert_array_equal(trace["L0.probs"], ref.attentions[0][0].numpy())
    assert "L0.W_q" in trace.arrays and "L0.bias" in trace.arrays  # ALiBi shown as the bias it is


def test_long_inputs_go_on_demand_by_themselves(monkeypatch):
    tf = pytest.importorskip("transformers")
    T = ON_DEMAND_T + 20
    torch.manual_seed(0)
    model = tf.MptForCausalLM(tf.MptConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=512,
                                           attn_implementation="eager")).eval()
    assert_auto_goes_on_demand(model, T, monkeypatch)


def test_mpts_length_is_its_max_seq_len():
    """MPT states its length as max_seq_len (its ALiBi has that many columns); it was read as the default 512."""
    tf = pytest.importorskip("transformers")
    from attnviz.hf.describe import describe_model, positions_of

    cfg = tf.MptConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=4096)
    assert positions_of(cfg) == 4096 and describe_model(cfg, "MptForCausalLM").max_len == 4096
    assert positions_of(tf.MptConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=300)) == 300
