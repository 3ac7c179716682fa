"""Traces of tiny HF models of every family: attnviz's Trace keys, checked against independent numpy math."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.analysis.rollout import compute_rollout
from attnviz.analysis.steps import compute_matrix_form, compute_six_steps
from attnviz.capture import Trace

from .factories import FAMILY_IDS, LABELS, trace_of

POST_LN = {"bert", "roberta", "distilbert", "albert"}
MLM = {"bert", "roberta", "albert"}


@pytest.fixture(scope="module")
def traces(hf_loaded):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = trace_of(hf_loaded[name])
        return cache[name]

    return get


def _f64(trace, key):
    return np.asarray(trace[key], dtype=np.float64)


def _softmax(a):
    top = np.max(a, axis=-1, keepdims=True)
    e = np.exp(a - top)
    return e / e.sum(axis=-1, keepdims=True)


def _heads(m, dh):
    return m.reshape(m.shape[0], -1, dh).transpose(1, 0, 2)  # (T, H·dh) → (H, T, dh)


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_probs_equal_the_models_own_eager_attentions(name, hf_loaded, traces):
    loaded = hf_loaded[name]
    trace, prep = traces(name)
    assert loaded.model.config._attn_implementation == "eager"
    with torch.no_grad():
        attentions = loaded.model(**prep.inputs, output_attentions=True).attentions
    assert len(attentions) == trace.n_layers == loaded.config.n_layers
    for i, a in enumerate(attentions):
        np.testing.assert_allclose(trace[f"L{i}.probs"], a[0].numpy(), rtol=0, atol=1e-6)
    assert trace.meta["qkv_available"] is True and trace.meta["source"] == "huggingface"


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_qkv_recompute_logits_probs_z_and_out(name, traces):
    trace, _ = traces(name)
    dh, scale = int(trace.meta["d_head"]), float(trace.meta["scale"])
    assert scale == pytest.approx(dh**-0.5)
    for i in range(trace.n_layers):
        p = f"L{i}."
        x = _f64(trace, p + "x")
        for n in "qkv":  # the projections' outputs are x W + b in the lectures' orientation
            np.testing.assert_allclose(_heads(x @ _f64(trace, p + "W_" + n) + _f64(trace, p + "b_" + n), dh),
                                       _f64(trace, p + n), atol=1e-5)
        q, k, v = (_f64(trace, p + n) for n in "qkv")
        logits = q @ k.transpose(0, 2, 1) * scale
        np.testing.assert_allclose(_f64(trace, p + "logits"), logits, atol=1e-5)
        probs = _softmax(logits + _f64(trace, p + "mask")[None])
        np.testing.assert_allclose(_f64(trace, p + "probs"), probs, atol=1e-5)
        z = probs @ v
        np.testing.assert_allclose(_f64(trace, p + "z"), z, atol=1e-5)
        concat = z.transpose(1, 0, 2).reshape(z.shape[1], -1)  # (T, H·dh), heads side by side
        np.testing.assert_allclose(_f64(trace, p + "out"), concat @ _f64(trace, p + "W_o") + _f64(trace, p + "b_o"),
                                   atol=1e-5)


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_mask_is_causal_only_for_gpt2(name, traces):
    trace, _ = traces(name)
    mask = trace["L0.mask"]
    T = len(trace.tokens)
    assert mask.shape == (T, T)
    if name == "gpt2":
        assert np.all(np.isneginf(mask[np.triu_indices(T, 1)])) and np.all(mask[np.tril_indices(T)] == 0)
        assert np.all(trace["L1.probs"][:, np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
        assert trace.meta["causal"] is True
    else:
        assert np.all(mask == 0) and trace.meta["causal"] is False


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_six_steps_and_matrix_form_reproduce_the_model(name, traces):
    trace, _ = traces(name)
    last = trace.n_layers - 1
    steps = compute_six_steps(trace, layer=last, head=1, query=2)
    assert steps.max_error < 1e-4 and steps.max_weight_error < 1e-5
    assert steps.kv_source == "recomputed" and steps.query_token == trace.tokens[2]
    form = compute_matrix_form(trace, layer=0)
    assert form.max_error < 1e-4


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_residual_stream(name, traces):
    trace, _ = traces(name)
    stream = _f64(trace, "emb.sum")
    for i in range(trace.n_layers):
        p = f"L{i}."
        if name in POST_LN:  # post-LN: the projections read the residual stream itself
            np.testing.assert_allclose(_f64(trace, p + "x"), stream, atol=1e-6)
        else:  # pre-LN: h = stream + attention(LN(stream))
            np.testing.assert_allclose(_f64(trace, p + "h"), stream + _f64(trace, p + "out"), atol=1e-5)
        stream = _f64(trace, p + "resid")
    assert trace.meta["config"]["norm"] == ("post" if name in POST_LN else "pre")


_POSITIONS = {"bert": "bert.embeddings.position_embeddings", "roberta": "roberta.embeddings.position_embeddings",
              "albert": "albert.embeddings.position_embeddings", "gpt2": "transformer.wpe",
              "distilbert": "distilbert.embeddings.position_embeddings"}


@pytest.mark.parametrize("name", ["bert", "roberta", "distilbert", "albert", "gpt2"])
def test_text_embeddings_are_the_models_table_rows(name, hf_loaded, traces):
    loaded = hf_loaded[name]
    trace, prep = traces(name)
    ids = prep.inputs["input_ids"][0].numpy()
    table = loaded.model.get_input_embeddings().weight.detach().numpy()
    np.testing.assert_allclose(trace["emb.token"], table[ids], atol=0)
    pos = loaded.model.get_submodule(_POSITIONS[name]).weight.detach().numpy()
    start = 2 if name == "roberta" else 0  # RoBERTa counts positions from padding id + 1
    np.testing.assert_allclose(trace["emb.pos"], pos[start:start + len(ids)], atol=0)


@pytest.mark.parametrize("name", ["vit", "deit"])
def test_vision_embeddings_patches_and_prefix_tokens(name, hf_loaded, traces):
    loaded = hf_loaded[name]
    trace, prep = traces(name)
    emb = loaded.model.base_model.embeddings
    n_prefix = trace.meta["prefix_tokens"]
    assert n_prefix == (2 if name == "deit" else 1) and trace.grid == (4, 4)
    assert trace.tokens[:n_prefix] == (["[CLS]", "[DIST]"] if name == "deit" else ["[CLS]"])
    assert trace.tokens[n_prefix] == "0,0" and trace.tokens[-1] == "3,3"
    W = trace["emb.patch_weight"].astype(np.float64)  # (D, C, P, P)
    D, C, P, _ = W.shape
    pix = prep.inputs["pixel_values"][0].numpy().astype(np.float64)  # (C, 16, 16)
    patches = pix.reshape(C, 4, P, 4, P).transpose(1, 3, 0, 2, 4).reshape(16, C * P * P)  # row-major patches
    bias = emb.patch_embeddings.projection.bias.detach().numpy()
    np.testing.assert_allclose(trace["emb.token"][n_prefix:], patches @ W.reshape(D, -1).T + bias, atol=1e-4)
    np.testing.assert_allclose(trace["emb.token"][0], emb.cls_token.detach().numpy()[0, 0], atol=0)
    np.testing.assert_allclose(trace["emb.pos"], emb.position_embeddings.detach().numpy()[0], atol=0)
    np.testing.assert_allclose(trace["emb.sum"], trace["emb.token"] + trace["emb.pos"], atol=1e-6)


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_prediction_is_the_models_output_distribution(name, hf_loaded, traces):
    loaded = hf_loaded[name]
    trace, prep = traces(name)
    with torch.no_grad():
        logits = loaded.model(**prep.inputs).logits[0].double().numpy()
    pred = trace["prediction"].astype(np.float64)
    if name in MLM:  # one distribution over the vocabulary per position
        assert pred.shape == (len(trace.tokens), len(loaded.tokenizer.vocab))
        np.testing.assert_allclose(pred, _softmax(logits), atol=1e-6)
    elif name == "gpt2":  # the next token after the last position
        np.testing.assert_allclose(pred, _softmax(logits[-1]), atol=1e-6)
        assert len(loaded.tokenizer.vocab) == pred.shape[0]
    else:  # class probabilities with the model's label names
        np.testing.assert_allclose(pred, _softmax(logits), atol=1e-6)
        assert loaded.info["labels"] == [LABELS[i] for i in range(3)]
    np.testing.assert_allclose(pred.sum(axis=-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("name,first,last,piece", [
    ("bert", "[CLS]", "[SEP]", "cat"), ("distilbert", "[CLS]", "[SEP]", "cat"), ("albert", "[CLS]", "[SEP]", "cat"),
    ("roberta", "<s>", "</s>", "Ġcat"), ("gpt2", "the", "d", "Ġcat")])  # BPE ends "tired" in "d"
def test_tokens_are_the_models_own_subwords_and_specials(name, first, last, piece, traces):
    trace, prep = traces(name)
    assert trace.tokens[0] == first and trace.tokens[-1] == last and piece in trace.tokens
    assert len(trace.tokens) == prep.inputs["input_ids"].shape[1]


def test_albert_layers_share_one_set_of_weights(traces):
    trace, _ = traces("albert")
    assert np.shares_memory(trace["L0.W_q"], trace["L1.W_q"])  # held once (views of the model's own weight)
    assert not np.allclose(trace["L0.probs"], trace["L1.probs"])  # different inputs, different maps


@pytest.mark.parametrize("name", ["bert", "gpt2", "vit"])
def test_grad_matches_autograd_through_the_models_own_attentions(name, hf_loaded):
    loaded = hf_loaded[name]
    trace, prep = trace_of(loaded, grad=True)
    out = loaded.model(**prep.inputs, output_attentions=True)
    for a in out.attentions:
        a.retain_grad()
    flat = out.logits[0] if out.logits.dim() == 2 else out.logits[0, -1]
    flat[int(flat.argmax())].backward()
    loaded.model.zero_grad(set_to_none=True)
    for i, a in enumerate(out.attentions):
        g = trace[f"L{i}.grad"]
        assert np.abs(g).max() > 0
        np.testing.assert_allclose(g, a.grad[0].numpy(), atol=1e-6)


@pytest.mark.parametrize("name", ["bert", "deit"])
def test_trace_round_trips_through_npz_and_rolls_out(name, traces, tmp_path):
    trace, _ = traces(name)
    trace.save(tmp_path / "t.npz")
    back = Trace.load(tmp_path / "t.npz")
    logits = {f"L{i}.logits" for i in range(trace.n_layers)}  # recomputed from q and k, never written
    assert back.tokens == trace.tokens and set(back.keys()) == set(trace.keys())
    assert not logits & set(trace.keys()) and not logits & set(back.arrays)
    for key in logits:
        assert key in back
        np.testing.assert_array_equal(back[key], trace[key])
    assert back.meta["hf_architecture"] == trace.meta["hf_architecture"] and back.meta["qkv_available"]
    roll = compute_rollout(back.all_probs())
    np.testing.assert_allclose(roll.sum(axis=-1), 1.0, atol=1e-5)


def test_rotary_gqa_family_is_captured_in_full(hf_loaded):
    loaded = hf_loaded["llama"]  # RoPE and grouped K/V: read through the attention interface
    trace, prep = trace_of(loaded)
    with torch.no_grad():
        out = loaded.model(**prep.inputs, output_attentions=True)
    assert trace.meta["qkv_available"] is True and loaded.info["qkv_available"]
    assert (trace.meta["n_kv_heads"], trace.meta["kv_group"], trace.meta["position"]) == (2, 2, "rotary")
    assert trace["L0.k"].shape[0] == 2 and "L0.q_pre_rope" in trace
    for i, a in enumerate(out.attentions):
        np.testing.assert_allclose(trace[f"L{i}.probs"], a[0].numpy(), atol=1e-6)
    np.testing.assert_allclose(trace["prediction"], torch.softmax(out.logits[0, -1], -1).numpy(), atol=1e-6)
    assert compute_six_steps(trace, 1, 3, len(trace.tokens) - 1).max_error < 1e-5


def test_layers_scaled_differently_keep_their_own_scale(hf_folders):
    from attnviz.hf.loader import load_hf_model

    loaded = load_hf_model(hf_folders["gpt2"], device="cpu")  # a private copy: the scale is changed
    loaded.model.transformer.h[1].attn.scaling /= 2.0  # like GPT-2's scale_attn_by_inverse_layer_idx
    trace, prep = trace_of(loaded)
    assert trace.meta["qkv_available"] is True
    assert trace.meta["layer_scales"] == pytest.approx([8 ** -0.5, 8 ** -0.5 / 2])
    with torch.no_grad():
        attentions = loaded.model(**prep.inputs, output_attentions=True).attentions
    np.testing.assert_allclose(trace["L1.probs"], attentions[1][0].numpy(), atol=1e-6)
    assert compute_matrix_form(trace, 1).max_error < 1e-5 and compute_matrix_form(trace, 1).scale == trace.meta["layer_scales"][1]


def test_capture_leaves_no_hook_and_restores_the_attention_implementation(hf_loaded):
    loaded = hf_loaded["bert"]
    model = loaded.model

    def hooks():  # transformers keeps hooks of its own (output recording): count, do not expect none
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    before = hooks()
    model.set_attn_implementation("sdpa")
    try:
        trace, _ = trace_of(loaded)
        assert model.config._attn_implementation == "sdpa"
    finally:
        model.set_attn_implementation("eager")
    assert trace.meta["qkv_available"]
    assert hooks() == before


def test_long_input_is_float16_and_recomputes_logits_and_out(tmp_path):
    from attnviz.capture.record import LARGE_T
    from attnviz.hf.loader import load_hf_model

    from .factories import make_model

    loaded = load_hf_model(make_model("bert", tmp_path / "long", max_pos=600), device="cpu")
    trace, prep = trace_of(loaded, text="the cat " * 260)  # 522 tokens with [CLS] and [SEP]
    T = len(trace.tokens)
    # probabilities on demand from q, k and each row's log-sum-exp (issue 34): nothing T×T kept, and the arrays
    # as the model computed them (float32)
    assert T > LARGE_T and trace.meta["precision"] == "float32" and trace["L0.z"].dtype == np.float32
    assert "L0.probs" in trace.deferred and "L0.probs" not in trace.arrays and trace["L1.q"].dtype == np.float32
    assert "L0.logits" not in trace.arrays and "L0.out" not in trace.arrays  # rebuilt on demand
    q, k = _f64(trace, "L1.q"), _f64(trace, "L1.k")
    np.testing.assert_allclose(trace["L1.logits"], q @ k.transpose(0, 2, 1) * trace.meta["scale"], rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        attentions = loaded.model(**prep.inputs, output_attentions=True).attentions
    np.testing.assert_allclose(trace.probs(1), attentions[1][0].numpy(), rtol=0, atol=1e-6)
    steps = compute_six_steps(trace, layer=1, head=0, query=T - 1)
    assert steps.max_error < 5e-3  # float16 storage
