"""run_trace leaves the default rollout until something reads it (issue 18: not on every keystroke);
what it then gives is exactly the rollout it used to store, and the paper's rollout recomputed in numpy."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.rollout import compute_rollout
from attnviz.capture.trace import Trace

from .factories import TEXT


def _rollout_numpy(trace):
    """Abnar & Zuidema (mean over heads, residual 0.5, rows renormalised), written out independently."""
    T = len(trace.tokens)
    R = np.eye(T)
    for i in range(trace.n_layers):
        A = 0.5 * trace.arrays[f"L{i}.probs"].astype(np.float64).mean(0) + 0.5 * np.eye(T)
        R = (A / A.sum(-1, keepdims=True)) @ R
    return R


def test_rollout_is_computed_when_read_and_equals_the_stored_one(hf_loaded, tmp_path):
    from attnviz.runtime import run_trace

    trace = run_trace(hf_loaded["bert"], text=TEXT)
    T = len(trace.tokens)
    assert "rollout" not in trace.arrays and "rollout" in trace and "rollout" in trace.keys()
    assert trace.shape("rollout") == (T, T) and "rollout" not in trace.arrays  # the shape costs nothing
    row = trace.row("rollout", 3)
    roll = trace["rollout"]
    assert roll.dtype == np.float32 and "rollout" in trace.arrays and "rollout" not in trace.deferred
    # bit for bit what run_trace stored before it was deferred
    np.testing.assert_array_equal(roll, compute_rollout(trace.all_probs()).astype(np.float32))
    np.testing.assert_array_equal(row, roll[3])
    np.testing.assert_allclose(roll, _rollout_numpy(trace), rtol=1e-5, atol=1e-7)
    trace_file = tmp_path / "t.npz"
    trace.save(trace_file)
    np.testing.assert_array_equal(Trace.load(trace_file)["rollout"], roll)


def test_a_saved_trace_holds_the_rollout_never_read(hf_loaded, tmp_path):
    from attnviz.runtime import run_trace

    trace = run_trace(hf_loaded["gpt2"], text=TEXT)
    trace.save(tmp_path / "t.npz")
    loaded = Trace.load(tmp_path / "t.npz")
    np.testing.assert_array_equal(loaded["rollout"], compute_rollout(trace.all_probs()).astype(np.float32))
    np.testing.assert_allclose(loaded["rollout"], _rollout_numpy(trace), rtol=1e-5, atol=1e-7)
    assert np.all(np.triu(loaded["rollout"], 1) == 0)  # causal: no token draws on later ones


def test_run_trace_without_rollout_has_none(hf_loaded):
    from attnviz.runtime import run_trace

    assert "rollout" not in run_trace(hf_loaded["bert"], text=TEXT, rollout=False)
