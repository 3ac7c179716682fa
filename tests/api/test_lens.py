"""TransformerLens (optional extra): a TransformerBridge and its ActivationCache give probabilities and q, k, v
that reproduce them. Skipped where TransformerLens is not installed (CI installs attnviz[transformerlens])."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz

pytest.importorskip("transformer_lens")
tf = pytest.importorskip("transformers")

from tests.hf.factories import make_model  # noqa: E402

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    from transformer_lens.model_bridge import TransformerBridge

    path = make_model("gpt2", tmp_path_factory.mktemp("tl") / "gpt2")  # random weights, built here: no download
    hf = tf.GPT2LMHeadModel.from_pretrained(str(path))
    return TransformerBridge.boot_transformers(str(path), hf_model=hf, tokenizer=tf.AutoTokenizer.from_pretrained(
        str(path)), device="cpu")


def _softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def test_a_bridge_traces_its_own_cache(bridge):
    t = attnviz.load(bridge).trace(TEXT)
    with torch.no_grad():
        _, cache = bridge.run_with_cache(TEXT)
    assert t.tokens == [str(s) for s in bridge.to_str_tokens(TEXT)]
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
