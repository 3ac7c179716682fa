"""The NaN/∞ check of a Hugging Face trace reads the model's weights once per weight version, and still
names every non-finite array (capture/finite.py, runtime/huggingface.py)."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.capture.finite import nonfinite_arrays
from attnviz.runtime.finite_weights import first_nonfinite_weight

from .factories import trace_of


def test_known_finite_names_are_skipped_and_shared_arrays_read_once():
    bad = np.array([np.nan, 1.0], np.float32)
    good = np.ones(3, np.float32)
    arrays = {"L0.W_q": bad, "L0.x": good, "L1.x": good, "L0.probs": bad}
    assert nonfinite_arrays(arrays) == {"L0.W_q": 1, "L0.probs": 1}
    assert nonfinite_arrays(arrays, known_finite=["L0.W_q"]) == {"L0.probs": 1}  # the caller's word


def test_parameters_are_checked_again_after_an_in_place_change(hf_folders):
    from attnviz.hf.loader import load_hf_model

    model = load_hf_model(hf_folders["bert"], device="cpu").model
    assert first_nonfinite_weight(model) is None and first_nonfinite_weight(model) is None
    with torch.no_grad():
        model.base_model.encoder.layer[1].attention.self.query.weight[0, 0] = float("nan")
    assert first_nonfinite_weight(model)[0].endswith("encoder.layer.1.attention.self.query.weight")
    with torch.no_grad():
        model.base_model.encoder.layer[1].attention.self.query.weight[0, 0] = 0.5
    assert first_nonfinite_weight(model) is None


def test_a_nan_weight_is_still_named_in_the_notice(hf_folders):
    from attnviz.hf.loader import load_hf_model

    loaded = load_hf_model(hf_folders["bert"], device="cpu")
    clean, _ = trace_of(loaded)
    assert "nonfinite" not in clean.meta
    with torch.no_grad():
        loaded.model.base_model.encoder.layer[1].attention.self.query.weight[0, 0] = float("nan")
    trace, _ = trace_of(loaded)
    assert "L1.W_q" in trace.meta["nonfinite"] and "NaN or infinite values" in trace.meta["notice"]
    # every array named, exactly as a check of every array would
    expected = nonfinite_arrays(trace.arrays)
    assert sorted(expected) == trace.meta["nonfinite"]
