"""Hugging Face encoder–decoders (T5, BART, Marian, mBART, Pegasus): the trace against transformers itself.

For every part (encoder self-attention, decoder self-attention, cross-attention) of every layer: the
probabilities equal transformers' own eager attentions; softmax(q kᵀ·scale + mask + bias) recomputed from
the trace's arrays equals them; P·V = z; concat(z)·W_O + b_O equals the attention module's output, read
by a hook of the test's own in an unrecorded run; q = x W_q + b_q and k = x_kv W_k + b_k. The next-token
distributions equal the unhooked model's; without a target the decoder reads transformers' greedy output.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.trace import layer_prefix

from .factories import FAMILIES, SOURCE, TARGET

PARTS = ("enc", "self", "cross")
TOL = 1e-5


def _trace(loaded, target=None):
    from attnviz.runtime import run_trace

    return run_trace(loaded, text=SOURCE, target_text=target, rollout=False, precision="float32")


def _eager(loaded, trace):
    """transformers' own eager run on the trace's input: attentions per part, logits, and each attention
    module's output (forward hooks of this test, by module name)."""
    model = loaded.model
    src = torch.tensor([loaded.tokenizer.encode(SOURCE).ids])
    dec = torch.tensor([[loaded.tokenizer.id_of(t) for t in trace.tokens]])
    outs: dict[str, list] = {"enc": [], "self": [], "cross": []}
    enc_name = next(n for n, m in model.named_modules() if m is model.get_encoder())
    handles = []
    for name, mod in model.named_modules():
        if name.endswith(("self_attn", "encoder_attn", "SelfAttention", "EncDecAttention")):
            part = "enc" if name.startswith(enc_name + ".") else (
                "cross" if name.endswith(("encoder_attn", "EncDecAttention")) else "self")
            handles.append(mod.register_forward_hook(lambda m, a, o, p=part: outs[p].append(o[0].detach())))
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            res = model(input_ids=src, decoder_input_ids=dec, output_attentions=True, use_cache=False)
    finally:
        model.set_attn_implementation(before)
        for h in handles:
            h.remove()
    probs = {"enc": res.encoder_attentions, "self": res.decoder_attentions, "cross": res.cross_attentions}
    return probs, res.logits, outs


def _softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _recompute(trace, prefix):
    q, k = trace[prefix + "q"].astype(np.float64), trace[prefix + "k"].astype(np.float64)
    scores = q @ k.transpose(0, 2, 1) * trace.meta["scale"] + trace[prefix + "mask"]
    if prefix + "bias" in trace:
        scores = scores + trace[prefix + "bias"]
    return _softmax(scores)


@pytest.fixture(scope="module", params=FAMILIES)
def family_run(request, encdec_loaded):
    loaded = encdec_loaded(request.param)
    trace = _trace(loaded, TARGET)
    return request.param, loaded, trace, _eager(loaded, trace)


def test_layout_is_the_translate_models(family_run):
    name, loaded, trace, _ = family_run
    assert trace.kind == "encoder-decoder" and trace.parts == ("enc", "cross", "self")
    assert trace.n_enc_layers == loaded.config.n_layers and trace.n_layers == loaded.config.dec_layers
    assert trace.src_tokens == loaded.tokenizer.encode(SOURCE).tokens
    assert trace["next_probs"].shape == (len(trace.tokens), len(loaded.tokenizer.vocab))
    for part in PARTS:
        n_q, n_k = len(trace.query_tokens(part)), len(trace.key_tokens(part))
        for i in range(trace.layers_in(part)):
            assert trace.probs(i, part).shape == (trace.n_heads, n_q, n_k)
    assert trace.meta["position"] == {"t5": "relative", "bart": "learned", "mbart": "learned"}.get(name, "sinusoidal")
    assert ("L0.bias" in trace and "enc.L0.bias" in trace) == (name == "t5")  # T5's relative position bias


def test_every_part_equals_transformers_eager_and_recomputes(family_run):
    _, _, trace, (probs, _, _) = family_run
    for part in PARTS:
        for i, ref in enumerate(probs[part]):
            p = layer_prefix(i, part)
            got = trace[p + "probs"]
            assert np.abs(got - ref[0].numpy()).max() <= TOL, (part, i)
            assert np.abs(_recompute(trace, p) - got).max() <= TOL, (part, i)
            z = trace[p + "probs"].astype(np.float64) @ trace[p + "v"].astype(np.float64)
            assert np.abs(z - trace[p + "z"]).max() <= TOL, (part, i)


def test_projections_and_output_equal_the_modules(family_run):
    _, _, trace, (_, _, outs) = family_run
    for part in PARTS:
        for i in range(trace.layers_in(part)):
            p = layer_prefix(i, part)
            H, dh = trace.n_heads, trace.meta["d_head"]
            z = trace[p + "z"].astype(np.float64)
            concat = z.transpose(1, 0, 2).reshape(z.shape[1], H * dh)
            out = concat @ trace[p + "W_o"] + trace[p + "b_o"]
            assert np.abs(out - outs[part][i][0].numpy()).max() <= TOL, (part, i)
            assert np.abs(trace[p + "out"] - outs[part][i][0].numpy()).max() <= TOL
            x = trace[p + "x"].astype(np.float64)
            q = (x @ trace[p + "W_q"] + trace[p + "b_q"]).reshape(len(x), H, dh).transpose(1, 0, 2)
            assert np.abs(q - trace[p + "q"]).max() <= TOL
            x_kv = trace[p + "x_kv"] if part == "cross" else x
            k = (x_kv @ trace[p + "W_k"] + trace[p + "b_k"]).reshape(len(x_kv), H, dh).transpose(1, 0, 2)
            assert np.abs(k - trace[p + "k"]).max() <= TOL


def test_next_probs_equal_the_unhooked_models(family_run):
    _, loaded, trace, (_, logits, _) = family_run
    ref = torch.softmax(logits[0].float(), dim=-1).numpy()
    # computed when asked, per row or whole (the capture runs the softmax for the prediction's row only; a fresh
    # trace: the shared one may have been asked for it by another test)
    fresh = _trace(loaded, TARGET)
    assert "next_probs" not in fresh.arrays and fresh.shape("next_probs") == ref.shape
    assert np.abs(trace.row("next_probs", 2) - ref[2]).max() <= 1e-6
    assert np.abs(trace.row("next_probs", 2) - ref[1]).max() > 1e-4  # control: another position's
    assert np.abs(trace["next_probs"] - ref).max() <= 1e-6
    assert np.array_equal(trace["prediction"], trace["next_probs"][-1])


@pytest.mark.parametrize("name", FAMILIES)
def test_without_target_the_decoder_reads_the_greedy_output(name, encdec_loaded):
    loaded = encdec_loaded(name)
    trace = _trace(loaded)
    src = torch.tensor([loaded.tokenizer.encode(SOURCE).ids])
    with torch.no_grad():
        ref = loaded.model.generate(input_ids=src, do_sample=False, num_beams=1,
                                    max_new_tokens=len(trace.tokens) - 1)[0].tolist()
    assert trace.tokens == loaded.tokenizer.hf.convert_ids_to_tokens(ref)
    assert trace.meta["decoder_input"] == "greedy"


@pytest.mark.parametrize("name", FAMILIES)
def test_a_target_is_what_the_decoder_reads(name, encdec_loaded):
    loaded = encdec_loaded(name)
    trace = _trace(loaded, TARGET)
    labels = loaded.tokenizer.hf(text_target=TARGET)["input_ids"]
    start = loaded.model.generation_config.decoder_start_token_id
    assert trace.tokens == loaded.tokenizer.hf.convert_ids_to_tokens([start] + labels)
    assert trace.meta["decoder_input"] == "target" and trace.meta["output_text"] == TARGET
    assert _trace(loaded).tokens != trace.tokens  # the random model does not write the target itself


def test_negative_controls(encdec_loaded):
    """The checks above fail on a wrong trace: another model's probabilities, T5 without its bias."""
    t5, bart = encdec_loaded("t5"), encdec_loaded("bart")
    trace = _trace(t5, TARGET)
    probs, _, _ = _eager(t5, trace)
    no_bias = np.abs(_softmax(trace["enc.L0.q"].astype(np.float64) @ trace["enc.L0.k"].transpose(0, 2, 1)
                              * trace.meta["scale"] + trace["enc.L0.mask"]) - trace["enc.L0.probs"]).max()
    assert no_bias > 1e-2  # the relative position bias matters: leaving it out breaks the recomputation
    other = _trace(encdec_loaded("mbart"), TARGET)
    ref_bart, _, _ = _eager(bart, _trace(bart, TARGET))
    assert np.abs(other["L0.cross.probs"] - ref_bart["cross"][0][0].numpy()).max() > 1e-3
    assert np.abs(trace["L0.probs"] - probs["self"][0][0].numpy()).max() <= TOL


def test_steps_and_matrix_form_recompute_every_part(family_run):
    """The walkthrough's six steps and the matrix form, from the trace's x, weights, mask and bias, give
    the model's z and attention output in every part (T5's relative position bias included)."""
    from attnviz.analysis.steps import compute_matrix_form, compute_six_steps

    _, _, trace, _ = family_run
    for part in PARTS:
        for layer in range(trace.layers_in(part)):
            form = compute_matrix_form(trace, layer, part=part)
            assert form.max_error <= TOL, (part, layer)
            last = len(trace.query_tokens(part)) - 1
            for head in range(trace.n_heads):
                steps = compute_six_steps(trace, layer, head, last, part=part)
                assert steps.max_error <= TOL and steps.max_weight_error <= TOL, (part, layer, head)
                assert steps.kv_source == "recomputed"


def test_residual_streams_and_embeddings(family_run):
    """h is R + A (pre-LN) or LN(R + A) (post-LN) of the layer's own stream; resid of layer i enters
    layer i + 1; the token and position embeddings are those of the model's tables."""
    name, loaded, trace, _ = family_run
    for base, n in (("enc.", trace.n_enc_layers), ("", trace.n_layers)):
        for i in range(n):
            assert f"{base}L{i}.h" in trace and f"{base}L{i}.resid" in trace
        emb = trace[f"{base}emb.sum"]
        x0 = trace[f"{base}L0.x"]
        assert emb.shape == x0.shape
    src_ids = loaded.tokenizer.encode(SOURCE).ids
    table = loaded.model.get_input_embeddings().weight.detach().numpy()
    scale = {"marian": 32 ** 0.5, "pegasus": 32 ** 0.5, "mbart": 32 ** 0.5, "m2m_100": 32 ** 0.5}.get(name, 1.0)
    assert np.abs(trace["enc.emb.token"] - table[src_ids] * scale).max() <= TOL
    if name in ("t5",):  # relative positions: no table, no emb.pos
        assert "enc.emb.pos" not in trace
    else:
        assert trace["enc.emb.pos"].shape == trace["enc.emb.token"].shape
        assert np.allclose(trace["enc.emb.pos_table"][: len(src_ids)], trace["enc.emb.pos"], atol=TOL)


def test_h_is_the_stream_after_the_self_attention_sublayer(family_run):
    name, loaded, trace, _ = family_run
    stacks = {"enc.": loaded.model.get_encoder(), "": loaded.model.get_decoder()}
    for base, n in (("enc.", trace.n_enc_layers), ("", trace.n_layers)):
        for i in range(n):
            stream = trace[f"{base}emb.sum"] if i == 0 else trace[f"{base}L{i - 1}.resid"]
            added = stream.astype(np.float64) + trace[f"{base}L{i}.out"]
            if name in ("bart", "marian"):  # post-LN: h = LN(R + A)
                ln = stacks[base].layers[i].self_attn_layer_norm
                with torch.no_grad():
                    added = ln(torch.tensor(added, dtype=torch.float32)).numpy()
            assert np.abs(trace[f"{base}L{i}.h"] - added).max() <= 1e-4, (base, i)
