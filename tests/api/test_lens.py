"""TransformerLens (optional extra): a TransformerBridge is traced whole through the transformers model inside it
(checked against its own cache), and an ActivationCache alone gives probabilities and q, k, v that reproduce
them. Skipped where TransformerLens is not installed (CI installs attnviz[transformerlens])."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz

pytest.importorskip("transformer_lens")
tf = pytest.importorskip("transformers")

from tests.hf.factories import make_model  # noqa: E402

TEXT = "the cat sat on the mat"


def _bridge(tmp_path_factory, family):
    from transformer_lens.model_bridge import TransformerBridge

    path = make_model(family, tmp_path_factory.mktemp("tl") / family)  # random weights, built here: no download
    hf = tf.AutoModelForCausalLM.from_pretrained(str(path))
    return TransformerBridge.boot_transformers(str(path), hf_model=hf, tokenizer=tf.AutoTokenizer.from_pretrained(
        str(path)), device="cpu")


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    return _bridge(tmp_path_factory, "gpt2")


@pytest.fixture(scope="module")
def llama_bridge(tmp_path_factory):
    return _bridge(tmp_path_factory, "llama")


def _softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("which", ["bridge", "llama_bridge"])
def test_a_bridge_is_traced_whole_and_equals_its_own_cache(which, request):
    bridge = request.getfixturevalue(which)
    before = {n: (p.data_ptr(), p.detach().clone()) for n, p in bridge.original_model.named_parameters()}
    t = attnviz.load(bridge).trace(TEXT)
    with torch.no_grad():
        _, cache = bridge.run_with_cache(TEXT)
    lens_tokens = [str(s) for s in bridge.to_str_tokens(TEXT)]
    assert [s.replace("Ġ", " ") for s in t.tokens] == lens_tokens
    n = t.meta["n_layers"]
    for i in range(n):
        np.testing.assert_allclose(t.probs(i), cache["pattern", i][0].numpy(), atol=1e-5)
        # independent recomputation from the trace's own x and weights: q = x W_Q (+ b) before any rotation
        x = t[f"L{i}.x"].astype(np.float64)
        q_pre = t[f"L{i}.q_pre_rope"] if f"L{i}.q_pre_rope" in t.arrays else t[f"L{i}.q"]
        w = t[f"L{i}.W_q"].astype(np.float64)  # (D, H·dh), the x W + b orientation
        b = t[f"L{i}.b_q"].astype(np.float64) if f"L{i}.b_q" in t.arrays else 0.0
        H, T, dh = q_pre.shape
        q_ours = (x @ w + b).reshape(T, H, dh).transpose(1, 0, 2)  # (T, H·dh) → (H, T, dh)
        np.testing.assert_allclose(q_ours, q_pre, atol=1e-4)
    assert "traced whole" in t.meta["notice"]
    assert t.figure("steps", layer=n - 1, head=1).to_bytes("png").startswith(b"\x89PNG")  # the walkthrough
    # the user's bridge is left as it was: same tensors, same values, and it still runs as before
    after = dict(bridge.original_model.named_parameters())
    assert all(after[k].data_ptr() == ptr and torch.equal(after[k].detach(), v) for k, (ptr, v) in before.items())
    with torch.no_grad():
        _, again = bridge.run_with_cache(TEXT)
    torch.testing.assert_close(again["pattern", 0], cache["pattern", 0])


def test_a_bridge_whose_model_differs_keeps_the_cache_trace(bridge, monkeypatch):
    """Negative control: if the unbridged model does not reproduce the bridge's own patterns, its trace is
    not shown; the cache's trace is, and the notice says why."""
    import attnviz.api.lens_unbridged as lu

    real = lu.unbridged_model

    def perturbed(b):
        m = real(b)
        m2 = type(m)(m.config).eval()  # other random weights: the attention differs
        return m2

    monkeypatch.setattr(lu, "unbridged_model", perturbed)
    t = attnviz.load(bridge).trace(TEXT)
    assert "differs from the bridge's own" in t.meta["notice"]
    assert t.tokens == [str(s) for s in bridge.to_str_tokens(TEXT)]  # the cache's own tokens (with BOS)
    with pytest.raises(attnviz.errors.AttnvizError, match="'steps' view needs"):
        t.figure("steps")


def test_a_cache_trace_is_complete_where_it_can_be(bridge):
    """The cache-only trace (a HookedTransformer, or a bridge that cannot be unwrapped): probabilities and q, k, v
    that reproduce them."""
    from attnviz.api.from_lens import from_lens_cache

    with torch.no_grad():
        _, cache = bridge.run_with_cache(TEXT)
    t = from_lens_cache(cache, [str(s) for s in bridge.to_str_tokens(TEXT)], cfg=bridge.cfg)
    for i in range(2):
        np.testing.assert_allclose(t.probs(i), cache["pattern", i][0].numpy(), atol=1e-6)
        # independent recomputation: softmax(q kᵀ · scale + mask) from the trace's own q, k
        q, k = t[f"L{i}.q"].astype(np.float64), t[f"L{i}.k"].astype(np.float64)  # (H, T, dh)
        logits = q @ k.transpose(0, 2, 1) * t.meta["scale"] + t[f"L{i}.mask"]
        np.testing.assert_allclose(_softmax(logits), t.probs(i), atol=1e-5)
    assert not np.allclose(t.probs(0), t.probs(1), atol=1e-3)  # negative control: layers differ
    assert t.meta["kind"] == "decoder" and t.meta["qkv_available"]
    with pytest.raises(attnviz.errors.AttnvizError, match="'steps' view needs q, k and v"):
        t.figure("steps")  # no x or weights: the walkthrough refuses in one line
    assert t.figure("head-map", layer=1, head=2).to_bytes("png").startswith(b"\x89PNG")


def test_a_cache_alone_is_accepted_as_attentions(bridge):
    with torch.no_grad():
        _, cache = bridge.run_with_cache(TEXT)
    tokens = [str(s) for s in bridge.to_str_tokens(TEXT)]
    t = attnviz.from_attentions(cache, tokens)
    np.testing.assert_array_equal(t.probs(1), cache["pattern", 1][0].numpy())
    with pytest.raises(attnviz.errors.InputError, match="query and"):
        attnviz.from_attentions(cache, tokens[1:])  # negative control: the token count is checked
