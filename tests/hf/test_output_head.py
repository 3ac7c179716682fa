"""The vocabulary projection computed only where it is shown (hf/output_head.py) equals the full one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture.trace import Trace
from attnviz.hf.output_head import DeferredPrediction

from .factories import trace_of

MLM = ["bert", "roberta", "albert"]


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _logits(loaded, prep):
    with torch.no_grad():  # the plain model, no hooks: the full computation
        return loaded.model(**prep.inputs).logits[0].double().numpy()


def _second_trace(loaded):
    """A capture after the model's first one (which checks that its logits are its projection's output)."""
    trace_of(loaded)
    return trace_of(loaded)


@pytest.mark.parametrize("name", MLM)
def test_mlm_prediction_is_deferred_and_every_row_equals_the_full_computation(name, hf_loaded):
    loaded = hf_loaded[name]
    trace, prep = _second_trace(loaded)
    assert "prediction" in trace.deferred and "prediction" not in trace.arrays  # nothing computed yet
    T, V = len(trace.tokens), len(loaded.tokenizer.vocab)
    assert "prediction" in trace and trace.shape("prediction") == (T, V) and "prediction" in trace.keys()
    full = _softmax(_logits(loaded, prep))
    for i in range(T):
        np.testing.assert_allclose(trace.row("prediction", i), full[i], rtol=1e-5, atol=1e-7)
    assert "prediction" not in trace.arrays  # rows do not compute the whole array
    whole = trace["prediction"]
    assert whole.dtype == np.float32 and whole.shape == (T, V) and "prediction" in trace.arrays
    np.testing.assert_allclose(whole, full, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", MLM)
def test_deferred_prediction_is_bitwise_the_ordinary_capture(name, hf_loaded):
    """The first capture of a model runs the projection inside the forward, as before; later ones
    defer it: the whole array is the same to the last bit."""
    from attnviz.hf.output_head import _VERIFIED

    loaded = hf_loaded[name]
    _VERIFIED.pop(loaded.model, None)
    first, _ = trace_of(loaded)
    second, _ = trace_of(loaded)
    assert "prediction" in first.arrays and "prediction" in second.deferred
    np.testing.assert_array_equal(second["prediction"], first["prediction"])


def test_deferred_rows_match_an_independent_numpy_recomputation(hf_loaded):
    loaded = hf_loaded["bert"]
    trace, _ = _second_trace(loaded)
    pending = trace.deferred["prediction"]
    h = pending.hidden.double().numpy()
    W = loaded.model.get_output_embeddings().weight.detach().double().numpy()
    b = loaded.model.get_output_embeddings().bias.detach().double().numpy()
    expected = _softmax(h @ W.T + b)
    got = np.stack([trace.row("prediction", i) for i in range(len(trace.tokens))])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_a_deferred_prediction_is_saved_whole(hf_loaded, tmp_path):
    trace, prep = _second_trace(hf_loaded["bert"])
    trace.save(tmp_path / "t.npz")
    back = Trace.load(tmp_path / "t.npz")
    np.testing.assert_allclose(back["prediction"], _softmax(_logits(hf_loaded["bert"], prep)), rtol=1e-5, atol=1e-7)


def test_language_model_head_projects_the_last_position_only(hf_loaded):
    loaded = hf_loaded["gpt2"]
    trace_of(loaded)  # the first capture checks the model
    rows = []
    handle = loaded.model.get_output_embeddings().register_forward_hook(lambda m, a, o: rows.append(a[0].shape[-2]))
    try:
        trace, prep = trace_of(loaded)
    finally:
        handle.remove()
    assert rows == [1] and len(trace.tokens) > 1  # one position projected onto the vocabulary
    assert "prediction" in trace.arrays and not trace.deferred
    np.testing.assert_allclose(trace["prediction"], _softmax(_logits(loaded, prep)[-1]), rtol=1e-5, atol=1e-7)


def test_gradient_captures_take_the_ordinary_path(hf_loaded):
    trace, prep = trace_of(hf_loaded["bert"], grad=True)
    trace, prep = trace_of(hf_loaded["bert"], grad=True)
    assert "prediction" in trace.arrays and not trace.deferred
    np.testing.assert_allclose(trace["prediction"], _softmax(_logits(hf_loaded["bert"], prep)), rtol=1e-5, atol=1e-7)


def test_nonfinite_hidden_states_are_not_deferred():
    proj = torch.nn.Linear(4, 6)
    ok = DeferredPrediction(proj, torch.ones(3, 4), np.float32)
    bad = DeferredPrediction(proj, torch.tensor([[1.0, float("inf"), 0, 0]] * 3), np.float32)
    huge = torch.nn.Linear(4, 6)
    with torch.no_grad():
        huge.weight.fill_(1e36)
    overflow = DeferredPrediction(huge, torch.full((3, 4), 100.0), np.float32)
    assert ok.surely_finite() and not bad.surely_finite() and not overflow.surely_finite()


def test_nan_output_weights_still_give_the_nonfinite_notice(hf_folders):
    from attnviz.hf.loader import load_hf_model

    loaded = load_hf_model(hf_folders["bert"], device="cpu")
    with torch.no_grad():
        loaded.model.get_output_embeddings().weight[3, 0] = float("nan")
    for _ in range(2):  # the second capture is the one that would defer
        trace, _ = trace_of(loaded)
    assert "prediction" in trace.arrays and "prediction" in trace.meta.get("nonfinite", [])


def test_weights_changed_after_capture_are_refused(hf_folders):
    from attnviz.hf.loader import load_hf_model

    loaded = load_hf_model(hf_folders["bert"], device="cpu")
    trace, _ = _second_trace(loaded)
    with torch.no_grad():
        loaded.model.get_output_embeddings().weight.mul_(2.0)
    with pytest.raises(RuntimeError, match="changed"):
        trace.row("prediction", 0)


def test_a_model_in_training_mode_is_captured_in_eval_mode_and_restored(hf_folders):
    from attnviz.hf.capture import eager_attention
    from attnviz.hf.loader import load_hf_model

    model = load_hf_model(hf_folders["bert"], device="cpu").model
    model.train()
    model.base_model.encoder.layer[0].attention.self.dropout.p = 0.5
    with eager_attention(model):
        assert not any(m.training for m in model.modules())  # dropout off while captured
    assert all(m.training for m in model.modules())
    model.eval()
    model.base_model.encoder.layer[1].train()  # one submodule left in training mode still counts
    with eager_attention(model):
        assert not any(m.training for m in model.modules())
    assert not model.training
