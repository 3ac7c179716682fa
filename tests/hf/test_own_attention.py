"""Falcon and DeBERTa-v2 compute attention themselves: the hooks on their public submodules give the full trace
(the shared checks are in test_generic_capture.py); here what is particular to them, and the negative controls."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.hf import own_attention
from attnviz.hf.capture import capture_hf

from .tiny_models import build, tokens_of


def _capture(name, **kw):
    model, inputs = build(name)
    return model, inputs, capture_hf(model, inputs, tokens_of(inputs, model), **kw)


def test_the_description_is_the_configs():
    expect = {"falcon": (1, "rotary"), "falcon_gqa": (2, "rotary"), "falcon_alibi": (4, "alibi"),
              "deberta-v2": (4, "relative"), "bloom": (4, "alibi"), "gpt_neo": (4, "learned")}
    for name, (kv, pos) in expect.items():
        _, _, trace = _capture(name)
        assert (trace.meta["n_heads"], trace.meta["n_kv_heads"], trace.meta["position"]) == (4, kv, pos), name
        assert trace.meta["qkv_available"] is True and "notice" not in trace.meta
    _, _, trace = _capture("deberta-v2")  # content scores over √(d_head · 3): c2p and p2c each add one
    assert trace.meta["scale"] == pytest.approx((8 * 3) ** -0.5)


def test_gpt_neo_is_unscaled_and_its_local_layers_are_a_window_in_the_mask():
    _, _, trace = _capture("gpt_neo")
    assert trace.meta["scale"] == 1.0 and trace.meta["sliding_window"] == [None, 4]
    i, j = np.indices((9, 9))
    assert np.array_equal(np.isfinite(trace["L0.mask"]), j <= i)
    assert np.array_equal(np.isfinite(trace["L1.mask"]), (j <= i) & (i - j < 4))


def test_deberta_c2p_p2c_terms_are_the_bias_and_alibi_too():
    for name in ("deberta-v2", "falcon_alibi", "bloom"):
        _, _, trace = _capture(name)
        bias = trace["L0.bias"]
        assert bias.shape == (4, 9, 9) and np.abs(bias).max() > 1e-3
        assert not np.allclose(bias[0], bias[1])  # per head
    _, _, trace = _capture("falcon_alibi")  # ALiBi: linear in the distance j - i, one slope per head
    b = trace["L0.bias"].astype(np.float64)
    i, j = np.tril_indices(9)
    slope = (b[:, i, j] - b[:, i, i]) / np.where(j - i == 0, 1, j - i)
    assert np.allclose(slope[:, j != i], slope[:, j != i][:, :1], atol=1e-5)


def test_the_falcon_rotation_recomputes_from_the_pre_rotation_arrays():
    from attnviz.hf.projections import rotate

    _, _, trace = _capture("falcon")
    cos, sin = (torch.from_numpy(trace[f"L1.rope_{n}"].astype(np.float64)) for n in ("cos", "sin"))
    k = rotate(torch.from_numpy(trace["L1.k_pre_rope"].astype(np.float64)), cos, sin).numpy()
    np.testing.assert_allclose(k, trace["L1.k"], rtol=0, atol=1e-5)


def test_only_the_asked_for_layers_are_kept_in_full():
    _, _, trace = _capture("deberta-v2", layers=[1])
    assert "L0.q" not in trace and "L0.probs" in trace and "L1.q" in trace and "L1.bias" in trace


def test_an_adapter_that_builds_wrong_arrays_leaves_probabilities_only_and_says_so(monkeypatch):
    """Negative control: DeBERTa's bias dropped (content scores only) no longer reproduces the model."""
    adapter, children = own_attention.ADAPTED["modeling_deberta_v2.DisentangledSelfAttention"]

    def no_bias(module, bound, proj, out):
        built = adapter(module, bound, proj, out)
        built["mask"] = torch.where(built["mask"] > -1e30, 0.0, built["mask"])
        return built

    monkeypatch.setitem(own_attention.ADAPTED, "modeling_deberta_v2.DisentangledSelfAttention", (no_bias, children))
    model, inputs, trace = _capture("deberta-v2")
    with torch.no_grad():
        ref = model(**inputs, output_attentions=True)
    np.testing.assert_allclose(trace["L0.probs"], ref.attentions[0][0].numpy(), rtol=0, atol=1e-6)
    assert "L0.q" not in trace and "did not reproduce the model's probabilities" in trace.meta["notice"]


def test_the_hooks_are_removed_after_an_error():
    model, inputs = build("falcon")

    def hooks():
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    before = hooks()
    model.transformer.h[1].mlp.forward = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom"))
    with pytest.raises(Exception):
        capture_hf(model, inputs, tokens_of(inputs, model))
    assert hooks() == before
