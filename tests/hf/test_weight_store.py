"""A trace keeps no copies of the weights it can read from the model (issue 34, Deliver 4): every trace of one
model reads W_Q … b_O from the model's own parameters (one shared, read-only store), a saved trace holds them once
and reopens in a fresh process with the same walkthrough numbers, without the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.lib.array_utils import byte_bounds

from attnviz.analysis.steps import compute_six_steps
from attnviz.hf.capture import capture_hf

from .tiny_models import build, tokens_of

_WEIGHTS = ("W_q", "W_k", "W_v", "W_o")
_REPO = Path(__file__).resolve().parents[2]


def _weight_keys(trace):
    return [k for k in trace.arrays if k.rpartition(".")[2] in _WEIGHTS]


def _distinct_bytes(*traces) -> int:
    """Bytes of the distinct memory behind every weight array of ``traces`` (views of one buffer counted once)."""
    spans = set()
    for t in traces:
        for k in _weight_keys(t):
            a = t.arrays[k]
            lo, hi = byte_bounds(a)
            spans.add((lo, hi))
    return sum(hi - lo for lo, hi in spans)


@pytest.mark.parametrize("attention", ["eager", "on_demand"])
def test_two_traces_of_one_model_share_one_weight_store(attention):
    model, inputs = build("llama")
    other_inputs = {"input_ids": inputs["input_ids"].flip(-1)}
    t1 = capture_hf(model, inputs, tokens_of(inputs, model), attention=attention)
    t2 = capture_hf(model, other_inputs, tokens_of(other_inputs, model), attention=attention)
    keys = _weight_keys(t1)
    assert len(keys) == 4 * t1.n_layers and sorted(keys) == sorted(_weight_keys(t2))
    params = [p.detach().numpy() for p in model.parameters()]
    for k in keys:
        assert np.shares_memory(t1.arrays[k], t2.arrays[k]), k
        assert any(np.shares_memory(t1.arrays[k], p) for p in params), k  # the model's own parameter
        assert not t1.arrays[k].flags.writeable, k  # nothing may write into the model through a trace
    one = _distinct_bytes(t1)
    assert one == sum(t1.arrays[k].nbytes for k in keys)  # no two layers' weights overlap
    assert _distinct_bytes(t1, t2) == one  # the second trace adds no weight bytes
    # control: a model with other weights (same shapes) is another store, and the count sees it
    other, _ = build("llama", seed=1)
    t3 = capture_hf(other, inputs, tokens_of(inputs, other), attention=attention)
    assert not any(np.shares_memory(t1.arrays[k], t3.arrays[k]) for k in keys)
    assert _distinct_bytes(t1, t3) == 2 * one


_STEP_FIELDS = ("q_i", "k", "v", "scores", "weights", "z_i")


def _walkthrough(trace, layer: int, head: int, query: int) -> dict:
    s = compute_six_steps(trace, layer, head, query)
    return {f: np.asarray(getattr(s, f), np.float64).tolist() for f in _STEP_FIELDS}


_CHILD = """
import json, sys
import numpy as np
from attnviz.capture import Trace
from attnviz.analysis.steps import compute_six_steps
t = Trace.load(sys.argv[1])
s = compute_six_steps(t, int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
print(json.dumps({f: np.asarray(getattr(s, f), np.float64).tolist() for f in %r}))
""" % (_STEP_FIELDS,)


def _in_fresh_process(path, layer, head, query) -> dict:
    env = {**os.environ, "PYTHONPATH": str(_REPO)}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(layer), str(head), str(query)],
                         capture_output=True, text=True, env=env, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _max_diff(a: dict, b: dict) -> float:
    return max(float(np.nanmax(np.abs(np.asarray(a[f]) - np.asarray(b[f])))) for f in _STEP_FIELDS)


@pytest.mark.parametrize("attention", ["eager", "on_demand"])
def test_a_saved_trace_reopens_in_a_fresh_process_with_the_same_walkthrough(attention, tmp_path):
    model, inputs = build("llama")
    tokens = tokens_of(inputs, model)
    trace = capture_hf(model, inputs, tokens, attention=attention)
    layer, head, query = 1, 3, len(tokens) - 2
    path = tmp_path / "t.npz"
    trace.save(path)
    live = _walkthrough(trace, layer, head, query)
    del model  # the fresh process has no model: the file's own weights
    reopened = _in_fresh_process(path, layer, head, query)
    assert _max_diff(live, reopened) <= 1e-6
    # control: the same input through a model with other weights gives other walkthrough numbers
    other, _ = build("llama", seed=1)
    other_path = tmp_path / "other.npz"
    capture_hf(other, inputs, tokens, attention=attention).save(other_path)
    assert _max_diff(live, _in_fresh_process(other_path, layer, head, query)) > 1e-3


def test_bfloat16_weights_are_converted_once_per_model_not_per_trace():
    """NumPy has no bfloat16: such weights are float32 copies, made once per model and shared by its traces until a
    weight changes in place (control: after a change the trace reads the new values)."""
    import torch

    model, inputs = build("llama")
    model = model.to(torch.bfloat16)
    tokens = tokens_of(inputs, model)
    t1 = capture_hf(model, inputs, tokens)
    t2 = capture_hf(model, {"input_ids": inputs["input_ids"].flip(-1)}, tokens)
    for k in _weight_keys(t1):
        assert t1.arrays[k].dtype == np.float32 and not t1.arrays[k].flags.writeable
        assert np.shares_memory(t1.arrays[k], t2.arrays[k]), k
    q_proj = model.model.layers[1].self_attn.q_proj
    np.testing.assert_array_equal(t1.arrays["L1.W_q"], q_proj.weight.detach().float().numpy().T)
    with torch.no_grad():
        q_proj.weight.mul_(2.0)  # a fine-tuning step changes the weight in place
    t3 = capture_hf(model, inputs, tokens)
    assert not np.shares_memory(t3.arrays["L1.W_q"], t1.arrays["L1.W_q"])
    np.testing.assert_array_equal(t3.arrays["L1.W_q"], 2.0 * t1.arrays["L1.W_q"])
    assert np.shares_memory(t3.arrays["L0.W_q"], t1.arrays["L0.W_q"])  # the unchanged layer still shared
