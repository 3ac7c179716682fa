"""The shared path (``runtime.load_model`` → ``run_trace``) on HF folders, through the HuggingFaceAdapter."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import InputError

from .factories import LABELS, TEXT, sample_image


def _load(folder):
    from attnviz.runtime import load_model

    return load_model(str(folder), device="cpu")


def test_run_trace_on_a_text_model_with_grad_and_rollout(hf_folders):
    from attnviz.runtime import run_trace

    loaded = _load(hf_folders["gpt2"])
    assert loaded.info["source"] == "huggingface"
    trace = run_trace(loaded, text=TEXT, grad=True)
    assert trace.meta["model_name"] == "gpt2" and trace.meta["input_text"] == TEXT
    assert "L1.grad" in trace and trace["rollout"].shape == (len(trace.tokens),) * 2
    assert trace.tokens[1] == "Ġcat" and trace["prediction"].shape == (len(loaded.tokenizer.vocab),)
    with pytest.raises(InputError, match="takes at most 24"):
        run_trace(loaded, text=" ".join(["the cat"] * 30))
    long = run_trace(loaded, text=" ".join(["the cat"] * 30), truncate=True)
    assert len(long.tokens) == 24 and "truncated" in long.meta["notice"]


def test_run_trace_on_a_vision_model_keeps_image_and_labels(hf_folders):
    from attnviz.runtime import run_trace

    loaded = _load(hf_folders["vit"])
    trace = run_trace(loaded, image=sample_image())
    assert trace.meta["labels"] == [LABELS[i] for i in range(3)] and trace["prediction"].shape == (3,)
    assert trace["image"].shape == (16, 16, 3) and trace.grid == (4, 4)
    np.testing.assert_allclose(trace["rollout"].sum(axis=-1), 1.0, atol=1e-5)
