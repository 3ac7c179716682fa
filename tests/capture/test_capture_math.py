"""The captured intermediates obey the attention equations (checked with independent numpy),
both attention paths compute the same function, and capture leaves the model as it found it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture import capture, layer_prefix

from tests.models.tiny import attention_modules, build_tiny, make_inputs


def _softmax(a: np.ndarray) -> np.ndarray:
    a = a - a.max(-1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(-1, keepdims=True)


def _prefixes(trace):
    out = [(layer_prefix(i), "self") for i in range(trace.n_layers)]
    if trace.has_cross:
        out += [(layer_prefix(i, "cross"), "cross") for i in range(trace.n_layers)]
    out += [(layer_prefix(i, "enc"), "enc") for i in range(trace.n_enc_layers)]
    return out


def _heads(m: np.ndarray, dh: int) -> np.ndarray:
    return m.reshape(m.shape[0], -1, dh).transpose(1, 0, 2)  # (T, n·dh) → (n, T, dh)


def test_intermediates_follow_the_equations(case):
    model, _, _, trace = case
    cfg = model.cfg
    H, Hkv, dh = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    group = H // Hkv
    assert trace.meta["kv_group"] == group
    for prefix, part in _prefixes(trace):
        t = {k[len(prefix):]: trace[k].astype(np.float64) for k in trace.keys() if k.startswith(prefix)
             and "." not in k[len(prefix):]}
        x = t["x"]
        q = _heads(x @ t["W_q"] + t["b_q"], dh)
        np.testing.assert_allclose(q, t["q"], atol=2e-5, err_msg=prefix)
        assert t["k"].shape[0] == t["v"].shape[0] == Hkv  # GQA/MQA: keys and values per kv head
        if part != "cross":  # cross-attention keys come from the encoder output, not from x
            np.testing.assert_allclose(_heads(x @ t["W_k"] + t["b_k"], dh), t["k"], atol=2e-5)
            np.testing.assert_allclose(_heads(x @ t["W_v"] + t["b_v"], dh), t["v"], atol=2e-5)
        # query head h reads kv head h // group: heads of one group share the same k and v
        k_rep = np.stack([t["k"][h // group] for h in range(H)])  # (H, Tk, dh)
        v_rep = np.stack([t["v"][h // group] for h in range(H)])
        logits = np.einsum("hqd,hkd->hqk", q, k_rep) * trace.meta["scale"]
        np.testing.assert_allclose(logits, trace[prefix + "logits"], atol=2e-5)  # recomputed, not stored
        mask = t["mask"]
        assert set(np.unique(mask)) <= {0.0, -np.inf}
        probs = _softmax(logits + mask)
        np.testing.assert_allclose(probs, t["probs"], atol=2e-6)
        np.testing.assert_allclose(t["probs"].sum(-1), 1.0, atol=1e-5)
        assert np.all(t["probs"][:, np.isinf(mask)] == 0)  # masked keys get exactly nothing
        z = probs @ v_rep
        np.testing.assert_allclose(z, t["z"], atol=2e-5)
        concat = z.transpose(1, 0, 2).reshape(z.shape[1], H * dh)  # (T, H·dh)
        np.testing.assert_allclose(concat @ t["W_o"] + t["b_o"], t["out"], atol=2e-5)
        if part == "self" and cfg.kind in ("decoder", "encoder-decoder"):  # causal self-attention
            upper = np.triu(np.ones(mask.shape, dtype=bool), 1)
            assert np.all(np.isinf(mask[upper])) and np.all(t["probs"][:, upper] == 0)


def test_padding_keys_get_no_attention():
    model = build_tiny("encoder")
    inputs, tokens = make_inputs(model, T=6, pad=2)
    trace = capture(model, inputs, tokens)
    for i in range(trace.n_layers):
        probs = trace.probs(i)
        assert np.all(probs[:, :, 4:] == 0) and np.all(probs[:, :, :4] > 0)


def test_fused_path_equals_explicit_path(case):
    model, inputs, _, trace = case
    with torch.no_grad():
        fused = model(**inputs)
        mods = attention_modules(model)
        try:
            for m in mods:
                m.fused = False
            explicit = model(**inputs)
        finally:
            for m in mods:
                m.fused = True
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-5)
    expected = torch.softmax(fused, -1)[0]
    expected = expected[-1] if model.cfg.kind in ("decoder", "encoder-decoder") else expected
    np.testing.assert_allclose(trace["prediction"], expected.numpy(), atol=1e-6)


def _assert_pristine(model, training: bool) -> None:
    assert model.training is training
    for mod in model.modules():
        assert not mod._forward_hooks and not mod._forward_pre_hooks and not mod._backward_hooks
        if hasattr(mod, "record"):
            assert mod.record is None
    for m in attention_modules(model):
        assert m.fused is True and m.keep_grad is False


@pytest.mark.parametrize("grad", [False, True])
def test_capture_restores_flags_and_leaves_no_hooks(grad):
    model = build_tiny("decoder")
    inputs, tokens = make_inputs(model)
    capture(model, inputs, tokens, grad=grad)
    _assert_pristine(model, training=False)
    model.train()
    capture(model, inputs, tokens, grad=grad)
    _assert_pristine(model, training=True)


def test_capture_restores_flags_when_forward_raises():
    model = build_tiny("encoder", pool="index").train()
    inputs, tokens = make_inputs(model)
    with pytest.raises(ValueError, match="pool_index"):
        capture(model, inputs, tokens)  # an index-pooling classifier needs pool_index
    _assert_pristine(model, training=True)


def test_capture_runs_in_evaluation_mode_and_puts_each_modules_mode_back():
    """Dropout is off while recording (the trace equals the evaluating model's), and a model whose parts
    were in different modes (a frozen block in a training model) gets each part's own mode back."""
    model = build_tiny("decoder", dropout=0.5)
    inputs, tokens = make_inputs(model)
    want = capture(model, inputs, tokens)
    model.train()
    frozen = model.stack.blocks[0]
    frozen.eval()
    modes = {name: m.training for name, m in model.named_modules()}
    got = capture(model, inputs, tokens)
    np.testing.assert_array_equal(got["L1.probs"], want["L1.probs"])
    np.testing.assert_array_equal(got["prediction"], want["prediction"])
    assert {name: m.training for name, m in model.named_modules()} == modes
    assert frozen.training is False and model.training is True
