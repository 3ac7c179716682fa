"""The six steps and the matrix form, recomputed in float64, reproduce what the model computed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.analysis import compute_matrix_form, compute_six_steps
from attnviz.capture import capture
from attnviz.errors import InputError

from tests.models.tiny import build_tiny, make_inputs


def _trace(kind, pad=0, **overrides):
    model = build_tiny(kind, **overrides)
    inputs, tokens = make_inputs(model, pad=pad)
    return capture(model, inputs, tokens, precision="float32")


@pytest.mark.parametrize("kind, overrides, layer, head, query, part", [
    ("encoder", {}, 1, 2, 3, "self"),
    ("decoder", {}, 1, 1, 2, "self"),  # causal: keys 3..5 masked
    ("decoder", {"n_kv_heads": 2}, 0, 2, 4, "self"),  # GQA: head 2 reads kv head 2 // 2 = 1 (not 2 % 2)
    ("encoder", {"n_kv_heads": 1}, 1, 2, 0, "self"),  # MQA
    ("encoder-decoder", {}, 1, 0, 2, "cross"),
    ("encoder-decoder", {}, 0, 1, 5, "enc"),
    ("vit", {}, 1, 3, 0, "self"),
])
def test_six_steps_reproduce_the_traced_z(kind, overrides, layer, head, query, part):
    trace = _trace(kind, **overrides)
    s = compute_six_steps(trace, layer, head, query, part=part)
    prefix = {"self": f"L{layer}.", "cross": f"L{layer}.cross.", "enc": f"enc.L{layer}."}[part]
    group = trace.meta["kv_group"]
    assert s.kv_head == head // group
    # the recomputation is independent of the traced q/k/logits, and agrees with them
    np.testing.assert_allclose(s.q_i, trace[prefix + "q"][head, query], atol=1e-5)
    np.testing.assert_allclose(s.k, trace[prefix + "k"][head // group], atol=1e-5)
    np.testing.assert_allclose(s.scaled, trace[prefix + "logits"][head, query], atol=1e-5)
    np.testing.assert_allclose(s.scaled, s.scores * s.scale)
    np.testing.assert_allclose(s.weights, trace[prefix + "probs"][head, query], atol=1e-6)
    np.testing.assert_allclose(s.z_i, s.weighted.sum(0))
    np.testing.assert_allclose(s.z_i, s.z_trace, atol=1e-5)
    assert s.max_error < 1e-5 and s.weights.sum() == pytest.approx(1.0)
    assert s.kv_source == "recomputed"  # cross-attention too: the trace records the encoder output x_kv
    assert len(s.key_tokens) == s.k.shape[0] and s.x_i.dtype == np.float64


def test_masked_keys_get_zero_weight_and_json_spells_minus_inf():
    trace = _trace("decoder")
    s = compute_six_steps(trace, 0, 2, 1)
    assert np.all(np.isinf(s.mask[2:])) and np.all(s.weights[2:] == 0) and np.all(s.weights[:2] > 0)
    doc = json.loads(json.dumps(s.to_json(), allow_nan=False))
    assert doc["mask"][2:] == ["-inf"] * 4 and doc["masked"][2:] == ["-inf"] * 4
    assert doc["mask"][:2] == [0.0, 0.0] and doc["query"] == 1 and doc["query_token"] == trace.tokens[1]
    np.testing.assert_allclose(doc["z_i"], s.z_i)
    assert np.array(doc["W_Q"]).shape == (16, 4)


def test_gqa_heads_of_one_group_share_keys_and_values():
    trace = _trace("encoder", n_kv_heads=2)
    a, b, c = (compute_six_steps(trace, 0, h, 1) for h in (0, 1, 2))
    np.testing.assert_array_equal(a.k, b.k)
    np.testing.assert_array_equal(a.v, b.v)
    assert not np.allclose(a.k, c.k) and not np.allclose(a.q_i, b.q_i)


@pytest.mark.parametrize("kind, part, overrides, pad", [
    ("encoder", "self", {}, 2),
    ("decoder", "self", {"n_kv_heads": 2}, 0),
    ("encoder-decoder", "cross", {"n_kv_heads": 1}, 1),
    ("encoder-decoder", "enc", {}, 1),
    ("vit", "self", {}, 0),
])
def test_matrix_form_reproduces_the_layer_output(kind, part, overrides, pad):
    trace = _trace(kind, pad=pad, **overrides)
    m = compute_matrix_form(trace, 1, part=part)
    prefix = {"self": "L1.", "cross": "L1.cross.", "enc": "enc.L1."}[part]
    np.testing.assert_allclose(m.P, trace[prefix + "probs"], atol=1e-6)
    np.testing.assert_allclose(m.Z, trace[prefix + "z"], atol=1e-5)
    np.testing.assert_allclose(m.out, trace[prefix + "out"], atol=1e-5)
    assert m.max_error < 1e-5
    assert m.concat.shape == (m.X.shape[0], trace.n_heads * trace.meta["d_head"])
    # each query of the matrix form equals the six-step recomputation
    s = compute_six_steps(trace, 1, trace.n_heads - 1, 2, part=part)
    np.testing.assert_allclose(m.Z[-1, 2], s.z_i, atol=1e-12)
    json.dumps(m.to_json(), allow_nan=False)


@pytest.mark.parametrize("args, message", [
    ((2, 0, 0, "self"), "layer 2 is out of range"),
    ((0, 4, 0, "self"), "head 4 is out of range"),
    ((0, 0, 6, "self"), "query 6 is out of range"),
    ((0, 0, -1, "self"), "query -1 is out of range"),
    ((0, 0, 0, "cross"), "no cross-attention"),
    ((0, 0, 0, "enc"), "no separate encoder"),
    ((0, 0, 0, "both"), "part 'both'"),
])
def test_bad_indices_are_clear_errors(args, message):
    trace = _trace("encoder")
    with pytest.raises(InputError, match=message):
        compute_six_steps(trace, *args[:3], part=args[3])


def test_matrix_form_applies_a_recorded_head_gate():
    import torch

    model = build_tiny("encoder")
    inputs, tokens = make_inputs(model)
    model.stack.blocks[0].attn.head_gate = torch.tensor([1.0, 0.0, 1.0, 0.5])
    trace = capture(model, inputs, tokens, precision="float32")
    np.testing.assert_array_equal(trace["L0.head_gate"], [1.0, 0.0, 1.0, 0.5])  # capture records the gate
    assert compute_matrix_form(trace, 0).max_error < 1e-5
    del trace.arrays["L0.head_gate"]  # z is recorded before the gate: without it the numbers disagree
    assert compute_matrix_form(trace, 0).max_error > 1e-3


def test_cross_attention_steps_name_the_token_produced_at_the_row():
    """A decoder row of cross-attention looks at the source of the word it produces: the steps say "→ word"."""
    from attnviz.analysis.decoder_positions import row_labels
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model("translate", device="cpu"), text="the big dog sees a small cat")
    for q in range(len(trace.tokens) - 1):
        steps = compute_six_steps(trace, layer=1, head=0, query=q, part="cross")
        assert steps.query_token == row_labels(trace, "cross")[q] == f"→ {trace.tokens[q + 1]}"
    assert compute_six_steps(trace, layer=1, head=0, query=2, part="self").query_token == trace.tokens[2]
