"""The opening trace stored with a model: equal to a live run, and never handed out once the weights change."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.checkpoint import save_checkpoint
from attnviz.models.registry import build_model
from attnviz.runtime import load_model, run_trace
from attnviz.runtime.opening import read_opening_trace, write_opening_trace
from attnviz.tasks import get_task


def _save(folder, seed):
    task = get_task("coref")
    cfg = task.model_config(d_model=16, n_heads=2)
    torch.manual_seed(seed)
    return save_checkpoint(folder, build_model(cfg).eval(), cfg, {"task": "coref", **task.info()},
                           tokenizer=task.tokenizer)


def test_stored_trace_equals_the_live_model_and_goes_stale_with_new_weights(tmp_path):
    folder = _save(tmp_path / "m", seed=0)
    assert write_opening_trace(folder) is not None
    text = get_task("coref").example_input()
    stored = read_opening_trace(folder, text=text)
    live = run_trace(load_model(folder, device="cpu"), text=text, truncate=True)
    assert stored is not None and stored.tokens == live.tokens
    for i in range(live.n_layers):
        np.testing.assert_allclose(stored[f"L{i}.probs"], live[f"L{i}.probs"], atol=1e-6)
    assert stored.meta["query_index"] == live.meta["query_index"]
    assert read_opening_trace(folder, text="another sentence") is None  # only for the text it was made from
    _save(folder, seed=1)  # retrained weights: the stored trace describes other weights now
    assert read_opening_trace(folder, text=text) is None


def test_vision_models_and_missing_files_have_no_opening_trace(tmp_path):
    assert read_opening_trace(tmp_path) is None
    task = get_task("digits")
    cfg = task.model_config()
    folder = save_checkpoint(tmp_path / "d", build_model(cfg).eval(), cfg, {"task": "digits", **task.info()})
    assert write_opening_trace(folder) is None and read_opening_trace(folder) is None
