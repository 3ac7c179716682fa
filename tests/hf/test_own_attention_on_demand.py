"""Families computing attention in their own code, on demand: Falcon (rotary, ALiBi, grouped), Bloom (ALiBi) and
GPT-Neo (unscaled, local windows) keep q, k, each row's log-sum-exp (computed by attnviz from q, k and the rule:
their kernels give none) and a score rule — ALiBi as one slope per head, GPT-Neo's local layers as a window — and
every block equals the model's own eager probabilities (output_attentions) within 1e-6. Negative controls (slopes
dropped, window dropped, the usual 1/√d scale for GPT-Neo, a wrong kv mapping, a wrong normaliser) fail; long
inputs go on demand by themselves and are no longer refused above MAX_FULL_T; DeBERTa still is. (MPT:
test_mpt_on_demand.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.on_demand import ON_DEMAND_T, OnDemandProbs, ScoreRule
from attnviz.hf.capture import capture_hf

from .on_demand_check import assert_auto_goes_on_demand
from .tiny_models import build, captured_pairs, tokens_of

TOL = 1e-6
ON_DEMAND = ["falcon", "falcon_alibi", "falcon_gqa", "bloom", "gpt_neo"]


@pytest.fixture(scope="module")
def pair():
    return captured_pairs(attention="on_demand")


@pytest.mark.parametrize("name", ON_DEMAND)
def test_on_demand_blocks_equal_eager(pair, name):
    model, _, ref, fast = pair(name)
    assert "notice" not in fast.meta and fast.meta["qkv_available"]
    for i, want in enumerate(ref.attentions):
        want = want[0].numpy()
        assert f"L{i}.probs" in fast.deferred and f"L{i}.probs" not in fast.arrays
        np.testing.assert_allclose(fast.probs(i), want, rtol=0, atol=TOL)
        H, T, _ = want.shape
        np.testing.assert_allclose(fast.probs(i, heads=[H - 1, 0], rows=slice(1, T, 2), cols=[T - 1, 0]),
                                   want[[H - 1, 0]][:, 1::2][:, :, [T - 1, 0]], rtol=0, atol=TOL)
        np.testing.assert_array_equal(np.isneginf(fast[f"L{i}.mask"]), want[0] == 0)
    alibi = name in ("falcon_alibi", "bloom")
    assert ("L0.score_alibi" in fast.arrays) == alibi  # rotary Falcon adds nothing to its scores
    assert not [k for k in fast.arrays if k.endswith((".bias", ".score_bias"))]  # no (H, T, T) bias kept


def _rule(fast, prefix, **change):
    facts = fast.meta["on_demand"][prefix]
    kw = dict(scale=facts["scale"], causal=facts["causal"], window=facts["window"],
              alibi=fast.arrays.get(prefix + "score_alibi"))
    return ScoreRule(**{**kw, **change})


@pytest.mark.parametrize("name,prefix,controls", [
    ("bloom", "L1.", {"slopes dropped": dict(alibi=None)}),
    ("falcon_alibi", "L0.", {"slopes dropped": dict(alibi=None)}),
    ("gpt_neo", "L1.", {"window dropped": dict(window=None), "scaled as usual": dict(scale=8 ** -0.5)}),
    ("falcon_gqa", "L0.", {}),
])
def test_negative_controls(pair, name, prefix, controls):
    _, _, ref, fast = pair(name)
    want = ref.attentions[int(prefix[1])][0].numpy()
    q, k, lse = fast[prefix + "q"], fast[prefix + "k"], fast[prefix + "lse"]
    assert np.abs(OnDemandProbs(q, k, lse, _rule(fast, prefix)).full() - want).max() <= TOL
    bad = {what: OnDemandProbs(q, k, lse, _rule(fast, prefix, **change)) for what, change in controls.items()}
    bad["wrong normaliser"] = OnDemandProbs(q, k, lse + 0.05, _rule(fast, prefix))
    if k.shape[0] > 1:
        bad["wrong kv mapping"] = OnDemandProbs(q, k[::-1].copy(), lse, _rule(fast, prefix))
    for what, probs in bad.items():
        assert np.abs(probs.full() - want).max() > 1e-3, what
    if name == "gpt_neo":
        assert fast.meta["on_demand"]["L0."]["window"] is None and fast.meta["on_demand"]["L1."]["scale"] == 1.0


def test_the_output_check_catches_a_wrong_normaliser(pair):
    """The capture's own check (p·v at three rows against the model's attention output) fails when it should."""
    from attnviz.hf.own_attention_fast import _check

    _, _, _, fast = pair("bloom")

    class Call:  # what _check reads of a call: v and z as the model had them
        value = torch.from_numpy(fast["L0.v"])[None]
        z = torch.from_numpy(fast["L0.z"].transpose(1, 0, 2).copy())[None]  # (H, T, dh) → (1, T, H, dh)

    q, k, lse = fast["L0.q"], fast["L0.k"], fast["L0.lse"]
    assert _check(Call, OnDemandProbs(q, k, lse, _rule(fast, "L0.")))
    assert not _check(Call, OnDemandProbs(q, k, lse + 0.05, _rule(fast, "L0.")))


@pytest.mark.parametrize("name", ["bloom", "gpt_neo", "falcon_alibi"])
def test_long_inputs_go_on_demand_by_themselves_and_are_not_refused(monkeypatch, name, tmp_path):
    model, _ = build(name)
    T = ON_DEMAND_T + 20
    if name == "gpt_neo":  # learned positions: the same tiny model with a table long enough for the input
        tf = pytest.importorskip("transformers")
        torch.manual_seed(0)
        model = tf.GPTNeoForCausalLM(tf.GPTNeoConfig(
            vocab_size=64, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
            window_size=4, max_position_embeddings=512)).eval()
        model.set_attn_implementation("eager")
    trace, want = assert_auto_goes_on_demand(model, T, monkeypatch, TOL)
    if name == "falcon_alibi":  # Falcon computes ALiBi in bfloat16: positions above 256 are rounded
        from attnviz.capture import Trace

        facts = trace.meta["on_demand"]["L0."]
        assert facts["alibi_bf16"]
        want0 = want[0][0].numpy()
        q, k, lse = trace["L0.q"], trace["L0.k"], trace["L0.lse"]
        plain = ScoreRule(scale=facts["scale"], causal=True, alibi=trace["L0.score_alibi"] * facts["alibi_scale"])
        assert np.abs(OnDemandProbs(q, k, lse, plain).full() - want0).max() > 1e-3  # control: slope · j unrounded
        trace.save(tmp_path / "falcon.npz")
        back = Trace.load(tmp_path / "falcon.npz")
        # the saved facts give the same rows; not bit for bit: BLAS may sum a reloaded (differently aligned) q·k in
        # another order (2.8e-9 seen in CI), while a lost bf16 flag moves them by more than 1e-3 (the control above)
        np.testing.assert_allclose(back.probs(0, rows=[T - 1]), trace.probs(0, rows=[T - 1]), rtol=0, atol=1e-7)


def test_bfloat16_rounding_is_torchs():
    from attnviz.capture.on_demand import _bf16

    x = np.concatenate([np.arange(0, 5000, 7), np.linspace(-3, 3, 101), [0.35355339, 1e-3, 257, 259, 3599]])
    np.testing.assert_array_equal(_bf16(x), torch.tensor(x, dtype=torch.float32).bfloat16().float().numpy())


def test_families_without_a_rule_keep_the_stated_limit(monkeypatch):
    """DeBERTa-v2 (terms no rule states) and DeBERTa v1 (no adapter) keep full maps up to MAX_FULL_T and say why
    beyond."""
    import attnviz.hf.capture as cap
    from attnviz.errors import InputError

    for name, why in (("deberta-v2", "cannot recompute"), ("deberta", "reads only the maps it returns")):
        model, inputs = build(name)
        tokens = tokens_of(inputs, model)
        monkeypatch.setattr(cap, "MAX_FULL_T", len(tokens))
        assert "L0.probs" in capture_hf(model, inputs, tokens, attention="on_demand").arrays  # within: full maps
        monkeypatch.setattr(cap, "MAX_FULL_T", len(tokens) - 1)
        with pytest.raises(InputError, match=why):
            capture_hf(model, inputs, tokens, attention="on_demand")
