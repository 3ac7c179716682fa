"""The generic capture (transformers' attention interface) on tiny random models of every family: each number of
the trace recomputes independently from the trace's own arrays and equals transformers' eager attention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.analysis.steps import compute_matrix_form, compute_six_steps
from attnviz.capture import Trace
from attnviz.hf.capture import capture_hf

from .tiny_models import HOOKED, INTERFACE, OWN_ATTENTION, build, captured_pairs, tokens_of

FULL = INTERFACE + HOOKED  # every family with the full trace


@pytest.fixture(scope="module")
def captured():
    return captured_pairs(after=True)


def _f64(trace, key):
    return np.asarray(trace[key], dtype=np.float64)


def _softmax(a):
    top = np.max(a, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(a - top)
    return e / e.sum(axis=-1, keepdims=True)


def _recomputed_probs(trace, i):
    """softmax(soft-cap(q kᵀ · scale) + mask + bias) from the trace's own q, k (GQA: kv head h // group)."""
    p = f"L{i}."
    q, k = _f64(trace, p + "q"), _f64(trace, p + "k")
    k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)
    s = q @ k.transpose(0, 2, 1) * trace.attention_scale(p)
    cap = trace.softcap(p)
    if cap:
        s = cap * np.tanh(s / cap)
    s = s + _f64(trace, p + "mask")[None]
    if p + "bias" in trace:
        s = s + _f64(trace, p + "bias")
    return _softmax(s)


@pytest.mark.parametrize("name", FULL)
def test_probs_equal_transformers_eager_attentions(name, captured):
    model, _, ref, trace, after = captured(name)
    assert len(ref.attentions) == trace.n_layers == model.config.num_hidden_layers
    for i, a in enumerate(ref.attentions):
        np.testing.assert_allclose(trace[f"L{i}.probs"], a[0].numpy(), rtol=0, atol=1e-5)
    assert trace.meta["qkv_available"] is True and "missing" not in trace.meta
    if name in INTERFACE:  # restored (the hooked families cannot switch: transformers keeps them on what they had)
        assert model.config._attn_implementation == "eager"
    np.testing.assert_array_equal(after.logits.numpy(), ref.logits.numpy())  # logits unchanged by capture


@pytest.mark.parametrize("name", FULL)
def test_softmax_of_scores_mask_and_bias_recomputes_the_probs(name, captured):
    _, _, _, trace, _ = captured(name)
    for i in range(trace.n_layers):
        np.testing.assert_allclose(_recomputed_probs(trace, i), _f64(trace, f"L{i}.probs"), rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", FULL)
def test_pv_is_z_and_concat_z_wo_is_the_attention_output(name, captured):
    _, _, _, trace, _ = captured(name)
    for i in range(trace.n_layers):
        p = f"L{i}."
        P, v = _f64(trace, p + "probs"), _f64(trace, p + "v")
        v = np.repeat(v, P.shape[0] // v.shape[0], axis=0)
        np.testing.assert_allclose(P @ v, _f64(trace, p + "z"), rtol=0, atol=1e-5)
        z = _f64(trace, p + "z")
        concat = z.transpose(1, 0, 2).reshape(z.shape[1], -1)
        out = concat @ _f64(trace, p + "W_o") + _f64(trace, p + "b_o")
        np.testing.assert_allclose(out, _f64(trace, p + "out"), rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", FULL)
def test_projections_and_rotation_recompute_q_and_k(name, captured):
    _, _, _, trace, _ = captured(name)
    from attnviz.hf.projections import rotate

    for i in range(trace.n_layers):
        p = f"L{i}."
        x, dh = _f64(trace, p + "x"), trace.meta["d_head"]
        heads = lambda m: m.reshape(m.shape[0], -1, dh).transpose(1, 0, 2)  # noqa: E731
        v = heads(x @ _f64(trace, p + "W_v") + _f64(trace, p + "b_v"))
        np.testing.assert_allclose(v, _f64(trace, p + "v"), rtol=0, atol=1e-4)
        q = heads(x @ _f64(trace, p + "W_q") + _f64(trace, p + "b_q"))
        if p + "q_pre_rope" in trace:
            if not trace.meta.get("qk_norm"):
                np.testing.assert_allclose(q, _f64(trace, p + "q_pre_rope"), rtol=0, atol=1e-4)
            cos, sin = (torch.from_numpy(_f64(trace, p + n)) for n in ("rope_cos", "rope_sin"))
            q = rotate(torch.from_numpy(_f64(trace, p + "q_pre_rope")), cos, sin).numpy()
            k = rotate(torch.from_numpy(_f64(trace, p + "k_pre_rope")), cos, sin).numpy()
            np.testing.assert_allclose(k, _f64(trace, p + "k"), rtol=0, atol=1e-4)
        np.testing.assert_allclose(q, _f64(trace, p + "q"), rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", FULL)
def test_six_steps_and_matrix_form_reproduce_the_model(name, captured):
    _, _, _, trace, _ = captured(name)
    for layer in range(trace.n_layers):
        assert compute_matrix_form(trace, layer).max_error < 1e-4
        s = compute_six_steps(trace, layer, trace.n_heads - 1, len(trace.tokens) - 1)
        assert s.max_error < 1e-4 and s.max_weight_error < 1e-5
        if "L0.rope_cos" in trace:  # the score depends on the positions only through their distance
            assert s.rotary_error < 1e-6 and s.distance[0] == -(len(trace.tokens) - 1)


def test_the_description_is_the_configs():
    expect = {"llama": (4, 2, "rotary"), "qwen3": (4, 1, "rotary"), "gemma2": (4, 2, "rotary"), "gpt2": (4, 4, "learned"),
              "opt": (4, 4, "learned"), "bert": (4, 4, "learned"), "gpt_neox": (4, 4, "rotary")}
    for name, (H, kv, pos) in expect.items():
        model, inputs = build(name)
        meta = capture_hf(model, inputs, tokens_of(inputs, model)).meta
        assert (meta["n_heads"], meta["n_kv_heads"], meta["kv_group"], meta["position"]) == (H, kv, H // kv, pos), name
        assert meta["config"]["pos"] == pos and meta["config"]["n_kv_heads"] == kv
    model, inputs = build("gemma2")
    meta = capture_hf(model, inputs, tokens_of(inputs, model)).meta
    assert meta["scale"] == pytest.approx(16 ** -0.5) and meta["softcap"] == 5.0
    assert meta["sliding_window"] == [4, None]


def test_sliding_window_is_in_the_mask(captured):
    _, _, _, trace, _ = captured("mistral")
    mask = trace["L0.mask"]
    i, j = np.indices(mask.shape)
    allowed = (j <= i) & (i - j < 4)
    assert np.array_equal(np.isfinite(mask), allowed) and trace.meta["sliding_window"] == [4, 4]


def test_a_broken_model_fails_the_checks():
    """Negative control: a model whose q projection is changed after the capture no longer recomputes."""
    model, inputs = build("llama")
    trace = capture_hf(model, inputs, tokens_of(inputs, model))
    last = len(trace.tokens) - 1
    good = compute_six_steps(trace, 0, 0, last)
    assert good.max_error < 1e-4 and good.rotary_error < 1e-6
    assert good.heads_sharing_kv == [0, 1] and good.kv_head == 0
    broken = Trace(tokens=trace.tokens, meta=trace.meta, arrays=dict(trace.arrays))
    broken.arrays["L0.W_q"] = trace.arrays["L0.W_q"] * 1.5
    assert compute_six_steps(broken, 0, 0, last).max_error > 1e-3
    broken = Trace(tokens=trace.tokens, meta=trace.meta, arrays=dict(trace.arrays))
    broken.arrays["L0.rope_sin"] = -trace.arrays["L0.rope_sin"]  # turning the wrong way
    s = compute_six_steps(broken, 0, 0, last)
    assert s.max_error > 1e-3


@pytest.mark.parametrize("name", OWN_ATTENTION)
def test_models_computing_attention_themselves_give_probabilities_and_say_what_is_missing(name):
    model, inputs = build(name)
    with torch.no_grad():
        ref = model(**inputs, output_attentions=True)
    trace = capture_hf(model, inputs, tokens_of(inputs, model))
    for i, a in enumerate(ref.attentions):
        np.testing.assert_allclose(trace[f"L{i}.probs"], a[0].numpy(), rtol=0, atol=1e-6)
    assert "L0.x" not in trace and trace.meta["qkv_available"] is False
    assert "not captured: x, q, k, v" in trace.meta["notice"] and "\n" not in trace.meta["notice"]


def test_swin_shows_its_first_stage_inside_the_first_window_and_says_so():
    model, inputs = build("swin")
    with torch.no_grad():
        ref = model(**inputs, output_attentions=True)
    trace = capture_hf(model, inputs, ["x"] * 65)
    assert trace.n_layers == 2 and trace.n_heads == 2  # stage 1: two blocks of two heads
    assert trace.tokens[:5] == ["0,0", "0,1", "0,2", "0,3", "1,0"] and len(trace.tokens) == 16
    assert "windows of 4×4 patches" in trace.meta["notice"] and "2 blocks of later stages are not shown" \
        in trace.meta["notice"]
    # transformers 5 returns one map per stage (its last block's, every window): window 0 of stage 1's
    np.testing.assert_allclose(trace["L1.probs"], ref.attentions[0][0].numpy(), rtol=0, atol=1e-5)
    for i in range(2):
        np.testing.assert_allclose(_recomputed_probs(trace, i), _f64(trace, f"L{i}.probs"), rtol=0, atol=1e-5)
        assert compute_matrix_form(trace, i).max_error < 1e-4
    assert "L0.bias" in trace  # Swin's learned relative position bias, separated from the (shift) mask
    assert np.all(np.isfinite(trace["L0.mask"]))  # block 0: no shift, nothing masked in window 0


def test_an_error_in_the_forward_restores_the_attention_and_removes_every_hook():
    model, inputs = build("llama")
    model.set_attn_implementation("sdpa")

    def hooks():
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    before = hooks()

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    model.model.layers[1].mlp.forward = broken
    with pytest.raises(RuntimeError, match="boom"):
        capture_hf(model, inputs, tokens_of(inputs, model))
    assert model.config._attn_implementation == "sdpa" and hooks() == before
    assert not any(m.training for m in model.modules())  # was in eval mode, still is
    from attnviz.hf.attention_record import _ACTIVE
    assert _ACTIVE.get() == ()  # no recorder left active in this context


def test_what_if_switches_refuse_a_hugging_face_model_in_one_line(tmp_path):
    from attnviz.errors import InputError
    from attnviz.hf.loader import load_hf_model
    from attnviz.whatif import WhatIf, run_whatif

    from .factories import make_model

    loaded = load_hf_model(make_model("qwen2", tmp_path / "qwen2"), device="cpu")
    with pytest.raises(InputError, match="not on Hugging Face models"):
        run_whatif(loaded, WhatIf(scale="none"), text="the cat sat")
