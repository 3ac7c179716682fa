"""Encoder–decoders on demand: encoder self, decoder self and cross attention captured on the fast kernel keep
q, k, each row's log-sum-exp and a score rule (T5's relative bias as its bucket table), never a (Tq, Tk) map;
every block recomputed from them equals the model's own eager probabilities (output_attentions). Negative
controls (the bias dropped, the causal rule dropped, a wrong normaliser) fail; a long T5 trace goes on demand by
itself and round-trips through a file."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture import Trace
from attnviz.capture.on_demand import ON_DEMAND_T, OnDemandProbs, ScoreRule
from attnviz.hf.encdec_capture import capture_encdec

from .factories import FAMILIES, SOURCE, TARGET, WORDS

PARTS = (("enc", "encoder_attentions"), ("self", "decoder_attentions"), ("cross", "cross_attentions"))


def _tol(lse: np.ndarray) -> float:
    """1e-6, or two float32 steps of the largest log-sum-exp: the kernel returns lse in float32, and
    p = exp(s − lse) carries lse's rounding (|Δp| ≤ p·|Δlse|); Marian's random layer 0 reaches lse ≈ 36."""
    return max(1e-6, 2 * float(np.spacing(np.float32(np.abs(lse).max()))))


def _inputs(loaded, text=SOURCE + " " + SOURCE):
    from attnviz.hf.encdec_inputs import prepare_encdec_text

    return prepare_encdec_text(loaded, text, target=TARGET)


def _reference(model, inputs):
    with torch.no_grad():
        return model(**inputs, output_attentions=True, use_cache=False)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_part_on_demand_equals_eager(encdec_loaded, family):
    loaded = encdec_loaded(family)
    prep = _inputs(loaded)
    ref = _reference(loaded.model, prep.inputs)
    fast = capture_encdec(loaded.model, prep.inputs, prep.tokens, attention="on_demand")
    assert not [k for k in fast.arrays if k.endswith((".probs", ".mask"))]  # nothing (Tq, Tk) kept
    for part, field in PARTS:
        for i, want in enumerate(getattr(ref, field)):
            want = want[0].numpy()
            prefix = {"enc": f"enc.L{i}.", "self": f"L{i}.", "cross": f"L{i}.cross."}[part]
            assert prefix + "probs" in fast.deferred and fast.probs_shape(i, part) == want.shape
            tol = _tol(fast[prefix + "lse"])
            np.testing.assert_allclose(fast.probs(i, part), want, rtol=0, atol=tol, err_msg=f"{part} {i}")
            H, tq, tk = want.shape
            np.testing.assert_allclose(fast.probs(i, part, heads=[H - 1, 0], rows=slice(1, tq, 2), cols=[tk - 1, 0]),
                                       want[[H - 1, 0]][:, 1::2][:, :, [tk - 1, 0]], rtol=0, atol=tol)
            np.testing.assert_array_equal(np.isneginf(fast[prefix + "mask"]), want[0] == 0)  # causal only in self


def test_t5_keeps_its_bias_as_the_bucket_rule(encdec_loaded):
    loaded = encdec_loaded("t5")
    prep = _inputs(loaded)
    fast = capture_encdec(loaded.model, prep.inputs, prep.tokens, attention="on_demand")
    rules = fast.meta["on_demand"]
    assert rules["enc.L1."]["rel_rule"]["bidirectional"] and not rules["L1."]["rel_rule"]["bidirectional"]
    assert not rules["L0.cross."]["rel_rule"] and "L0.cross.score_rel_table" not in fast.arrays  # cross: no bias
    assert rules["L0."]["causal"] and not rules["enc.L0."]["causal"] and not rules["L0.cross."]["causal"]
    assert fast.meta["additive_bias"]
    emb = loaded.model.encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight.detach().numpy()
    np.testing.assert_array_equal(fast["enc.L1.score_rel_table"], emb)  # layer 1 reuses the first layer's table


@pytest.mark.parametrize("prefix,part,field", [("enc.L0.", "enc", "encoder_attentions"),
                                               ("L0.", "self", "decoder_attentions"),
                                               ("L0.cross.", "cross", "cross_attentions")])
def test_negative_controls_on_t5(encdec_loaded, prefix, part, field):
    loaded = encdec_loaded("t5")
    prep = _inputs(loaded)
    want = getattr(_reference(loaded.model, prep.inputs), field)[0][0].numpy()
    fast = capture_encdec(loaded.model, prep.inputs, prep.tokens, attention="on_demand")
    q, k, lse = fast[prefix + "q"], fast[prefix + "k"], fast[prefix + "lse"]
    facts = fast.meta["on_demand"][prefix]
    table = fast.arrays.get(prefix + "score_rel_table")

    def rule(**change):
        kw = dict(scale=facts["scale"], causal=facts["causal"], rel_table=table, rel_rule=facts["rel_rule"])
        return ScoreRule(**{**kw, **change})

    assert np.abs(OnDemandProbs(q, k, lse, rule()).full() - want).max() <= _tol(lse)
    controls = {"wrong normaliser": OnDemandProbs(q, k, lse + 0.05, rule())}
    if table is not None:
        controls["bias dropped"] = OnDemandProbs(q, k, lse, rule(rel_table=None))
    if facts["causal"]:
        controls["causal rule dropped"] = OnDemandProbs(q, k, lse, rule(causal=False))
    for what, probs in controls.items():
        assert np.abs(probs.full() - want).max() > 1e-3, what


def test_long_t5_goes_on_demand_by_itself_and_round_trips(encdec_loaded, tmp_path):
    loaded = encdec_loaded("t5")
    text = " ".join(WORDS[i % len(WORDS)] for i in range(ON_DEMAND_T + 40))
    prep = _inputs(loaded, text)
    T = prep.inputs["input_ids"].shape[1]
    assert T >= ON_DEMAND_T
    trace = capture_encdec(loaded.model, prep.inputs, prep.tokens)  # attention="auto"
    assert trace.meta["on_demand"] and not [k for k in trace.arrays if k.endswith(".probs")]
    biggest = max(a.size for a in trace.arrays.values())
    assert biggest < T * T  # no (T, T) array: the largest is O(T·d)
    ref = _reference(loaded.model, prep.inputs)
    for part, field in PARTS:
        for i, want in enumerate(getattr(ref, field)):
            rows = slice(max(0, want.shape[2] - 30), None)
            got = trace.probs(i, part, rows=rows)
            np.testing.assert_allclose(got, want[0, :, rows].numpy(), rtol=0, atol=1e-6, err_msg=f"{part} {i}")
    path = tmp_path / "long_t5.npz"
    trace.save(path)
    back = Trace.load(path)
    assert "enc.L1.probs" in back.deferred and "enc.L1.probs" not in back.arrays
    for part in ("enc", "self", "cross"):
        np.testing.assert_array_equal(back.probs(1, part, heads=2, rows=[0, -1]), trace.probs(1, part, heads=2,
                                                                                                rows=[0, -1]))


def test_short_inputs_stay_eager(encdec_loaded):
    """Below ON_DEMAND_T the model's own eager maps are kept, exactly as computed (negative control of 'auto')."""
    loaded = encdec_loaded("bart")
    prep = _inputs(loaded)
    trace = capture_encdec(loaded.model, prep.inputs, prep.tokens)
    assert "enc.L0.probs" in trace.arrays and "on_demand" not in trace.meta
    np.testing.assert_array_equal(trace["enc.L0.probs"], _reference(loaded.model, prep.inputs).encoder_attentions[0][0])
