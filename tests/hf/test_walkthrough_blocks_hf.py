"""The matrix form's window scored a key block at a time equals the model's own attention (rotary GQA with
biases, Gemma 2's soft-cap and window, GPT-OSS's sinks and window), and GPT-OSS's half-width rotary tables
are read so that Q = X W_Q, turned by the trace's tables, is the model's own q."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.analysis import steps_rows
from attnviz.analysis.rotary import rotate
from attnviz.analysis.steps import compute_matrix_form, compute_six_steps
from attnviz.hf.capture import capture_hf

from .tiny_models import build, tokens_of

_traces = {}


def _trace(name):
    if name not in _traces:
        model, inputs = build(name)
        _traces[name] = (model, capture_hf(model, inputs, tokens_of(inputs, model)))
    return _traces[name][1]


def _softmax_alone(masked: np.ndarray) -> np.ndarray:
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("name,layer", [("qwen2", 1), ("gemma2", 0), ("gpt_oss", 0), ("gpt_oss", 1)])
def test_a_window_scored_key_block_by_key_block_is_the_models_attention(name, layer, monkeypatch):
    trace = _trace(name)
    T = len(trace.tokens)
    a, b = 3, T - 2
    whole = compute_matrix_form(trace, layer)  # every key in one block
    monkeypatch.setattr(steps_rows, "KEY_BLOCK_CELLS", 1)  # one key per block: the two-pass softmax across blocks
    f = compute_matrix_form(trace, layer, window=(a, b))
    assert f.windowed and f.P.shape[1:] == (b - a, b - a)
    model = np.asarray(trace.probs(layer), dtype=np.float64)  # the model's own eager attention (a short input)
    np.testing.assert_allclose(f.P, model[:, a:b, a:b], atol=1e-6)
    np.testing.assert_allclose(f.Z, np.asarray(trace[f"L{layer}.z"], np.float64)[:, a:b], atol=1e-5)
    assert f.max_error < 1e-5
    for field in ("QK", "scaled", "masked", "P"):  # the blocked path is the one-block path, to rounding
        np.testing.assert_allclose(getattr(f, field), getattr(whole, field)[:, a:b, a:b], atol=1e-12, rtol=1e-12)
    np.testing.assert_allclose(f.Z, whole.Z[:, a:b], atol=1e-12)
    np.testing.assert_allclose(f.out, whole.out[a:b], atol=1e-12)
    # negative control: a softmax of the shown columns alone (the keys before the window dropped) is not P
    assert np.abs(_softmax_alone(np.where(np.isneginf(f.masked), -1e300, f.masked)) - f.P).max() > 1e-3


def test_gpt_oss_sinks_are_in_the_normaliser():
    trace = _trace("gpt_oss")
    T = len(trace.tokens)
    s = compute_six_steps(trace, 1, 3, T - 1)
    model = np.asarray(trace.probs(1, heads=3, rows=T - 1), np.float64)[0, 0]
    np.testing.assert_allclose(s.weights, model, atol=1e-6)
    assert s.sink == pytest.approx(float(trace["L1.sinks"][3])) and s.max_error < 1e-5
    assert s.weights.sum() < 1 - 1e-3  # the sink took a share
    # negative control: without the sink every row sums to 1, which is not the model's row
    from attnviz.analysis.steps import softmax

    assert np.abs(softmax(s.masked) - model).max() > 1e-3
    f = compute_matrix_form(trace, 1, window=(0, T))
    assert np.abs(steps_rows.scored_rows(
        f.Q, np.asarray(f.K[::2]), np.asarray(f.V[::2]), f.scale, None, lambda c0, c1: f.mask[:, c0:c1], None,
        (0, T)).P - np.asarray(trace.probs(1), np.float64)).max() > 1e-3  # the form without its sinks


def test_gpt_oss_q_is_x_w_q_turned_by_the_traces_tables():
    trace = _trace("gpt_oss")
    assert not any("W_Q" in m for m in trace.description.missing)
    for layer in (0, 1):
        p = f"L{layer}."
        dh = int(trace.description.d_head)
        x = np.asarray(trace[p + "x"], np.float64)
        proj = (x @ trace[p + "W_q"] + trace[p + "b_q"]).reshape(len(x), -1, dh).transpose(1, 0, 2)  # (H, T, dh)
        cos, sin = np.asarray(trace[p + "rope_cos"], np.float64), np.asarray(trace[p + "rope_sin"], np.float64)
        assert cos.shape[-1] == dh  # stored widened: every dimension turns
        np.testing.assert_allclose(rotate(proj, cos, sin), trace[p + "q"], atol=1e-6)
        # negative control: the half-width tables read as rotate_half's (what left W_Q/K/V out before)
        assert np.abs(rotate(proj, cos[:, :dh // 2], sin[:, :dh // 2]) - trace[p + "q"]).max() > 1e-2


def test_rope_readings_match_transformers_gpt_oss_rotation():
    from transformers.models.gpt_oss import modeling_gpt_oss as oss

    from attnviz.hf.projections import rope_readings
    from attnviz.hf.projections import rotate as rotate_t

    model = _traces.get("gpt_oss", (None,))[0] or build("gpt_oss")[0]
    pos = torch.arange(9)[None]
    x = torch.randn(1, 4, 9, model.config.head_dim, generator=torch.Generator().manual_seed(3))
    cos, sin = model.model.rotary_emb(x, pos)  # (1, T, dh/2): half-width
    want = oss.apply_rotary_pos_emb(x, x, cos, sin)[0][0]  # transformers' own rotation, (H, T, dh)
    readings = rope_readings((cos, sin), model.config.head_dim)
    assert len(readings) == 2
    torch.testing.assert_close(rotate_t(x[0], readings[1][0][0], readings[1][1][0]), want, atol=1e-6, rtol=0)
    # negative control: the tables as given, in rotate_half's convention, turn other dimensions
    assert float((rotate_t(x[0], cos[0], sin[0]) - want).abs().max()) > 1e-2


@pytest.mark.parametrize("leaf", ["h", "v", "q_pre_rope", "x", "L0.x"])
def test_position_rows_of_a_long_captures_arrays_are_their_rows(leaf, monkeypatch):
    """A capture that keeps h, v, x and q before the rotation as rules (and its arrays on disk): the walkthrough's
    row reader computes a rule for the rows asked alone (v from the rows of the recomputed x), equal to those rows
    of the whole array."""
    import transformers as tf

    from attnviz.analysis.steps_inputs import position_rows
    from attnviz.capture import spill
    from attnviz.capture.recomputed import Recomputed

    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                                               num_attention_heads=6, num_key_value_heads=2,
                                               max_position_embeddings=128)).eval()
    ids = torch.randint(0, 97, (1, 40), generator=torch.Generator().manual_seed(5))
    monkeypatch.setattr(spill, "SPILL_BUDGET", 0)
    monkeypatch.setattr(spill, "SPILL_MIN_BYTES", 1)
    trace = capture_hf(model, {"input_ids": ids}, [str(i) for i in range(40)], attention="on_demand")
    key = leaf if leaf.startswith("L0.") else f"L1.{leaf}"
    if key == "L0.x":  # the first layer's input: stored, on disk
        assert isinstance(trace.arrays[key], np.memmap)
    else:  # a rule: computed for the rows asked alone
        assert key not in trace.arrays and isinstance(trace.deferred[key], Recomputed)
    whole = np.asarray(trace[key], np.float64)
    rows = position_rows(trace, key, 11, 17)
    want = whole[11:17] if whole.ndim == 2 else whole[:, 11:17]
    np.testing.assert_allclose(rows, want, atol=1e-6 * np.abs(whole).max(), rtol=0)
    other = whole[12:18] if whole.ndim == 2 else whole[:, 12:18]  # negative control: the next rows differ
    assert np.abs(rows - other).max() > 1e-3 * np.abs(whole).max()
