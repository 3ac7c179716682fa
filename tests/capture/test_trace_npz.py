"""Trace files: NPZ round trip in float32 and float16, and logits recomputed on demand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture import Trace, capture
from attnviz.capture.record import LARGE_T, recording
from attnviz.errors import InputError
from attnviz.models.attention import Attention

from tests.models.tiny import build_tiny, make_inputs


@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_npz_round_trip(tmp_path, precision):
    model = build_tiny("encoder-decoder")
    inputs, tokens = make_inputs(model, pad=1)
    trace = capture(model, inputs, tokens, precision=precision, meta={"input_text": "x y"})
    trace.arrays["src_tokens"] = np.array(["a", "b", "c", "d", "e", "f"], dtype=str)
    path = tmp_path / "t.npz"
    trace.save(path)
    back = Trace.load(path)
    assert back.tokens == trace.tokens and back.src_tokens == ["a", "b", "c", "d", "e", "f"]
    assert {k: v for k, v in back.meta.items() if k != "format"} == trace.meta
    assert back.meta["precision"] == precision
    assert sorted(back.keys()) == sorted(trace.keys())
    for key in trace.keys():
        assert back[key].dtype == trace[key].dtype, key
        np.testing.assert_array_equal(back[key], trace[key], err_msg=key)
    assert back["L0.probs"].dtype == np.dtype(precision)
    tol = 1e-5 if precision == "float32" else 2e-3
    np.testing.assert_allclose(back.probs(1).sum(-1), 1.0, atol=tol)
    assert not list(tmp_path.glob("*.part"))  # the temporary file was renamed into place


@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_logits_are_not_stored_and_recomputed_equal_the_models_own(precision):
    """The scores (H, T, T) are not kept beside the probabilities; recomputed from q and k they equal the scores
    the model computed (read from its own record, not from the trace)."""
    model = build_tiny("decoder", n_kv_heads=2)
    inputs, tokens = make_inputs(model)
    trace = capture(model, inputs, tokens, precision=precision)
    assert not [k for k in trace.arrays if k.endswith(".logits")]
    layers = [m for m in model.modules() if isinstance(m, Attention)]
    with recording(model), torch.no_grad():  # the model's own explicit path, its record read directly
        model(**inputs)
        own = [m.record["logits"][0].float().numpy() for m in layers]
    assert len(own) == trace.n_layers
    tol = 1e-5 if precision == "float32" else 3e-2
    for i, want in enumerate(own):
        key = f"L{i}.logits"
        assert key in trace and key not in trace.arrays
        np.testing.assert_allclose(trace[key], want, atol=tol, rtol=tol)
    # control: another layer's scores are not these
    assert np.abs(trace["L0.logits"] - own[1]).max() > 10 * tol


def test_long_inputs_are_stored_in_float16_without_logits(tmp_path):
    T = LARGE_T + 4
    model = build_tiny("encoder", n_layers=1, n_heads=2, d_model=8, max_len=T, std=0.2)
    inputs, tokens = make_inputs(model, T=T)
    trace = capture(model, inputs, tokens)
    assert trace.meta["precision"] == "float16" and trace["L0.probs"].dtype == np.float16
    assert "L0.logits" not in trace.arrays and "L0.logits" in trace
    logits = trace["L0.logits"]
    assert logits.shape == (2, T, T)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(-1, keepdims=True), trace["L0.probs"].astype(np.float32), atol=1e-3)
    path = tmp_path / "long.npz"
    trace.save(path)
    np.testing.assert_array_equal(Trace.load(path)["L0.logits"], logits)


def test_loading_a_file_that_is_not_a_trace_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(InputError, match="cannot read trace"):
        Trace.load(bad)
