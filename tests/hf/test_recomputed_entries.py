"""Arrays a long capture keeps as rules over others (attnviz.capture.recomputed): q/k before rotation, v and the
mid-block stream of tiny random decoders (Llama: rotary, grouped-query; GPT-2: fused projections, biases).

Checked against the same capture storing them (``layer_arrays.RECOMPUTE = False``) and against the model's own
tensors read by hooks (independent of attnviz's reading): equal within 1e-6 of each array's largest value.
Negative controls: the rotation undone the wrong way, values from the key weights, the mid-block stream on
another layer's stream differ by far more. A saved trace keeps the rules, not the arrays, and reads them back
(its content marker still recognises it); a spilled capture writes the weights and the rotary tables once."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch

from attnviz.capture import spill
from attnviz.capture.recomputed import Recomputed
from attnviz.capture.trace import Trace
from attnviz.hf import layer_arrays
from attnviz.hf.capture import capture_hf
from attnviz.io.trace_marker import has_trace_marker

T = 48
LEAVES = {"llama": ("q_pre_rope", "k_pre_rope", "v", "h", "x"), "gpt2": ("v", "h", "x")}


def _model(name: str):
    import transformers as tf

    torch.manual_seed(0)
    if name == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=97, n_embd=32, n_layer=3, n_head=4, n_positions=128)).eval()
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=128)
    return tf.LlamaForCausalLM(cfg).eval()


def _ids():
    return torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(5))


def _capture(model, recompute: bool, monkeypatch, spilled: bool = False) -> Trace:
    with monkeypatch.context() as m:
        m.setattr(layer_arrays, "RECOMPUTE", recompute)
        if spilled:
            m.setattr(spill, "SPILL_BUDGET", 0)
            m.setattr(spill, "SPILL_MIN_BYTES", 1)
        return capture_hf(model, {"input_ids": _ids()}, [str(i) for i in range(T)], attention="on_demand")


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def named(request):
    return request.param, _model(request.param)


def _close(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    return float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))


def test_recomputed_entries_equal_the_stored_arrays(named, monkeypatch):
    name, model = named
    stored = _capture(model, False, monkeypatch)
    ruled = _capture(model, True, monkeypatch)
    assert "recomputed" not in stored.meta
    assert "L0.x" in ruled.arrays  # the first layer's input stays stored (the embeddings are not a kept stream)
    for i in range(3):
        for leaf in LEAVES[name]:
            if leaf == "x" and i == 0:
                continue
            key = f"L{i}.{leaf}"
            assert key in stored.arrays and key not in ruled.arrays and key in ruled.deferred, key
            assert ruled.meta["recomputed"][key]["kind"]
            assert ruled.shape(key) == stored.arrays[key].shape
            assert _close(ruled[key], stored.arrays[key]) <= 1e-6, key
    norms = [k for k in ruled.keys() if k.endswith((".norm_w", ".norm_b"))]  # the rule's ingredients: x's norm
    assert norms and all(k.startswith(("L1.", "L2.")) for k in norms)
    assert sorted(k for k in ruled.keys() if k not in norms) == sorted(stored.keys())


def test_recomputed_entries_equal_the_models_own_tensors(monkeypatch):
    """Independent of attnviz's reading: hooks on the Llama model's own modules."""
    model = _model("llama")
    seen = {}
    attn = model.model.layers[1].self_attn
    hooks = [attn.v_proj.register_forward_hook(lambda m, a, out: seen.setdefault("v", out.detach().clone())),
             attn.k_proj.register_forward_hook(lambda m, a, out: seen.setdefault("k", out.detach().clone())),
             model.model.layers[1].post_attention_layernorm.register_forward_hook(
                 lambda m, a, out: seen.setdefault("h", a[0].detach().clone())),
             model.model.layers[2].input_layernorm.register_forward_hook(
                 lambda m, a, out: seen.setdefault("x", out.detach().clone()))]
    try:
        trace = _capture(model, True, monkeypatch)
    finally:
        for h in hooks:
            h.remove()
    dh = 8
    v = seen["v"][0].reshape(T, -1, dh).transpose(0, 1).numpy()  # (T, H_kv·dh) → (H_kv, T, dh)
    k = seen["k"][0].reshape(T, -1, dh).transpose(0, 1).numpy()
    assert _close(trace["L1.v"], v) <= 1e-6
    assert _close(trace["L1.k_pre_rope"], k) <= 1e-6  # no per-head norm in Llama: what entered the rotation
    assert _close(trace["L1.h"], seen["h"][0].numpy()) <= 1e-6  # the stream the second norm reads
    assert trace.meta["recomputed"]["L2.x"]["kind"] == "rms_normed"
    assert _close(trace["L2.x"], seen["x"][0].numpy()) <= 1e-6  # what the attention reads: RMSNorm's output
    assert isinstance(trace.deferred["L2.v"].sources[0], Recomputed)  # v: projected from the recomputed x


def test_negative_controls_differ(monkeypatch):
    trace = _capture(_model("llama"), True, monkeypatch)
    a = trace.arrays
    wrong_turn = Recomputed("unrotated", [a["L1.q"], a["L1.rope_cos"], -a["L1.rope_sin"]], a["L1.q"].shape, np.float32)
    assert _close(wrong_turn.full(), trace["L1.q_pre_rope"]) > 1e-3
    right = Recomputed("unrotated", [a["L1.q"], a["L1.rope_cos"], a["L1.rope_sin"]], a["L1.q"].shape, np.float32)
    assert _close(right.full(), trace["L1.q_pre_rope"]) <= 1e-6  # the control's twin passes
    wrong_w = Recomputed("projected", [trace["L1.x"], a["L1.W_k"], a["L1.b_k"]], trace.shape("L1.v"), np.float32, d_head=8)
    assert _close(wrong_w.full(), trace["L1.v"]) > 1e-3
    wrong_stream = Recomputed("mid_stream", [a["L0.resid"], a["L2.z"], a["L2.W_o"], a["L2.b_o"]], trace.shape("L2.h"),
                              np.float32)
    assert _close(wrong_stream.full(), trace["L2.h"]) > 1e-3
    rule = trace.meta["recomputed"]["L2.x"]
    x = trace["L2.x"]
    for offset, stream, far in ((1.0, "L1.resid", True), (0.0, "L0.resid", True), (0.0, "L1.resid", False)):
        got = Recomputed("rms_normed", [a[stream], a["L2.norm_w"]], x.shape, np.float32,
                         params={"eps": rule["eps"], "offset": offset}).full()
        assert (_close(got, x) > 1e-3) == far, (offset, stream)  # Gemma's 1 + w, another layer's stream; the twin


def test_saved_trace_keeps_rules_and_reads_them_back(tmp_path, monkeypatch):
    trace = _capture(_model("llama"), True, monkeypatch)
    path = tmp_path / "long.npz"
    trace.save(path)
    with zipfile.ZipFile(path) as zf:
        members = set(zf.namelist())
    assert "L1.v.npy" not in members and "L1.q_pre_rope.npy" not in members and "L1.x.npy" not in members
    assert "L0.x.npy" in members and "L1.norm_w.npy" in members
    assert has_trace_marker(path)
    back = Trace.load(path)
    assert back.meta["recomputed"] == trace.meta["recomputed"]
    for key in trace.meta["recomputed"]:
        assert key in back.deferred
        np.testing.assert_array_equal(back[key], trace[key])
    # a rule naming an ingredient the file lacks is left out, not an error
    fresh = Trace.load(path)  # (back keeps what it computed: a short trace's entries are small)
    broken = Trace(tokens=fresh.tokens, meta=fresh.meta, arrays={k: v for k, v in fresh.arrays.items() if k != "L0.x"})
    assert "L0.v" not in broken and "L1.v" in broken
    # v is a rule over the rule for x: without the stream x is made of, neither is there
    broken = Trace(tokens=fresh.tokens, meta=fresh.meta,
                   arrays={k: v for k, v in fresh.arrays.items() if k != "L0.resid"})
    assert "L1.x" not in broken and "L1.v" not in broken and "L2.v" in broken


def test_spilled_capture_writes_weights_and_rotary_tables_once(monkeypatch):
    model = _model("llama")
    kept = _capture(model, True, monkeypatch)
    spilled = _capture(model, True, monkeypatch, spilled=True)
    assert spilled.spill is not None
    for key in kept.meta["recomputed"]:
        np.testing.assert_array_equal(spilled[key], kept[key])
    assert not isinstance(spilled.arrays["L1.W_q"], np.memmap)  # the model's own parameter, read in place
    assert not any(k.rpartition(".")[2].startswith(("W_", "b_")) for k in spilled.spill.files)
    cos = [spilled.arrays[f"L{i}.rope_cos"] for i in range(3)]
    assert all(isinstance(c, np.memmap) for c in cos) and cos[0] is cos[1] is cos[2]
    assert sum(k.endswith("rope_cos") for k in spilled.spill.files) == 1


def test_rules_from_a_shared_file_chain_one_level_and_never_loop():
    """meta["recomputed"] comes from a file anyone may share: a loop of rules makes nothing, a rule over a rule over
    a rule stops at the first level, a norm rule with a wrong epsilon or offset is left out."""
    from attnviz.capture.recomputed import attach, describe

    a = {"s": np.ones((4, 6), np.float32), "w": np.ones(6, np.float32), "W": np.ones((6, 6), np.float32),
         "b": np.zeros(6, np.float32)}
    norm = describe("rms_normed", ["s", "w"], (4, 6), np.float32, eps=1e-6, offset=0.0)
    rules = {"x": norm, "v": describe("projected", ["x", "W", "b"], (2, 4, 3), np.float32, d_head=3),
             "v2": describe("projected", ["v", "W", "b"], (2, 4, 3), np.float32, d_head=3),  # a third level
             "p": describe("projected", ["q", "W", "b"], (2, 4, 3), np.float32, d_head=3),  # a loop: p ← q ← p
             "q": describe("projected", ["p", "W", "b"], (2, 4, 3), np.float32, d_head=3),
             "bad_eps": {**norm, "eps": 5.0}, "bad_offset": {**norm, "offset": 2.0}, "eps_text": {**norm, "eps": "1e-6"}}
    deferred = {}
    attach(a, {"recomputed": rules}, deferred)
    assert sorted(deferred) == ["v", "x"]
    np.testing.assert_allclose(deferred["x"].full(), np.ones((4, 6)), rtol=1e-6)
    np.testing.assert_allclose(deferred["v"].full(), np.full((2, 4, 3), 6.0), rtol=1e-6)
    np.testing.assert_allclose(deferred["v"].positions(1, 3), np.full((2, 2, 3), 6.0), rtol=1e-6)
