"""precision="float16" says what it costs (issue 34): the trace's notice states the bound, and the bound holds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import attnviz
from attnviz.capture.storage_notice import half_storage_notice


@pytest.mark.parametrize("name", ["coref", "translate"])
def test_a_float16_trace_says_its_bound_and_keeps_it(name):
    model = attnviz.load(name)
    exact, half = model.trace(precision="auto").trace, model.trace(precision="float16").trace
    assert exact.description.notice is None  # control: float32 arrays lose nothing and say nothing
    assert half.description.precision == "float16"
    parts = ("self", "enc", "cross") if half.kind == "encoder-decoder" else ("self",)
    assert half.description.notice == "arrays stored in float16: probabilities within 2.5e-4 of the model's (float16 rounding)"
    worst = max(float(np.abs(np.asarray(half.probs(i, p), np.float64) - exact.probs(i, p)).max())
                for p in parts for i in range(half.layers_in(p)))
    assert 1e-5 < worst <= 2.5e-4  # the stated bound holds, and float16 really rounded (not a float32 copy)


def test_the_saved_file_keeps_the_notice(tmp_path):
    half = attnviz.load("coref").trace(precision="float16")
    half.save(tmp_path / "t.npz")
    assert "within 2.5e-4" in attnviz.open_trace(tmp_path / "t.npz").trace.description.notice


def test_which_line_a_description_gets():
    d = lambda **kw: SimpleNamespace(**{"precision": "float16", "compute_dtype": None, "on_demand": None, **kw})
    assert "within 2.5e-4" in half_storage_notice(d())
    assert "~5e-3 on sharp heads" in half_storage_notice(d(on_demand={"0": {}}))
    assert "within 2.5e-4" in half_storage_notice(d(compute_dtype="bfloat16"))
    assert half_storage_notice(d(compute_dtype="float16")) is None  # the model's own float16 values: exact
    assert half_storage_notice(d(precision="float32")) is None
