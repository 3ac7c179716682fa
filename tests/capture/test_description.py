"""The typed trace description and the one helper every capture finishes its Trace with."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnviz.capture.description import TraceDescription, _CHECKS
from attnviz.capture.finish import finish_trace, storage_dtypes
from attnviz.capture.trace import LARGE_T
from attnviz.errors import AttnvizError, InputError


def test_every_field_has_a_check_and_a_documented_meaning():
    fields = dataclasses.fields(TraceDescription)
    assert set(_CHECKS) == {f.name for f in fields}
    assert all(f.metadata.get("what") for f in fields)


def _probs(n_layers: int, heads: int, t: int = 3, prefix: str = "L") -> dict:
    return {f"{prefix}{i}.probs": np.full((heads, t, t), 1 / t, np.float32) for i in range(n_layers)}


def test_finish_trace_writes_the_description_joins_notices_and_lets_the_capture_win():
    desc = TraceDescription(kind="decoder", n_layers=2, n_heads=4, n_kv_heads=2, scale=0.5, causal=True)
    context = {"model_name": "m", "notice": "the text was truncated", "scale": 9.0, "n_heads": 7}
    t = finish_trace(["a", "b", "c"], _probs(2, 4), desc, context, notices=["x", "the text was truncated", ""])
    assert t.meta["scale"] == 0.5 and t.meta["n_heads"] == 4  # what the run computed, not what was passed in
    assert t.meta["kv_group"] == 2 and t.meta["model_name"] == "m"
    assert t.meta["notice"] == "the text was truncated; x"
    assert t.description == dataclasses.replace(desc, model_name="m", notice="the text was truncated; x")


@pytest.mark.parametrize("n_layers, heads, says", [(3, 4, "has no L2.probs"), (1, 4, "also has L1.probs"),
                                                   (2, 2, "2 heads but L0.probs has 4")])
def test_finish_trace_refuses_a_description_its_arrays_contradict(n_layers, heads, says):
    desc = TraceDescription(kind="encoder", n_layers=n_layers, n_heads=heads)
    with pytest.raises(AttnvizError, match=says):
        finish_trace(["a", "b", "c"], _probs(2, 4), desc)
    # control: the description that matches the arrays
    assert finish_trace(["a", "b", "c"], _probs(2, 4), TraceDescription(n_layers=2, n_heads=4)).n_layers == 2


def test_finish_trace_checks_the_context_types_and_finiteness():
    with pytest.raises(InputError, match="'query_index' must be a whole number"):
        finish_trace(["a", "b", "c"], _probs(1, 1), TraceDescription(n_layers=1, n_heads=1), {"query_index": "2"})
    arrays = _probs(1, 1)
    arrays["L0.probs"][0, 0, 0] = np.nan
    t = finish_trace(["a", "b", "c"], arrays, TraceDescription(n_layers=1, n_heads=1), known_finite=())
    assert t.meta["nonfinite"] == ["L0.probs"] and "NaN" in t.meta["notice"]
    # control: not asked to check (a Hugging Face capture's runtime checks with the weights it knows finite)
    assert "nonfinite" not in finish_trace(["a", "b", "c"], arrays, TraceDescription(n_layers=1, n_heads=1)).meta


@pytest.mark.parametrize("precision, n, on_demand, want", [
    ("auto", LARGE_T, False, (np.float32, np.float32)), ("auto", LARGE_T + 1, False, (np.float16, np.float32)),
    ("auto", LARGE_T + 1, True, (np.float32, np.float32)), ("float16", 4, True, (np.float16, np.float16)),
    ("float32", LARGE_T * 4, False, (np.float32, np.float32))])
def test_storage_dtypes(precision, n, on_demand, want):
    assert storage_dtypes(precision, n, on_demand) == want


def test_an_unknown_precision_is_refused():
    with pytest.raises(InputError, match="precision must be one of"):
        storage_dtypes("float64", 4)


def test_the_names_are_documented_in_one_place_and_the_format_page_points_there():
    from pathlib import Path

    import attnviz.capture.description as module

    page = (Path(__file__).parents[2] / "docs" / "TRACE_FORMAT.md").read_text(encoding="utf-8")
    assert "attnviz/capture/description.py" in page and "| key | shape |" not in page  # no second table
    for name in ("L{i}.q", "L{i}.probs", "L{i}.cross.x_kv", "enc.L{i}.*", "emb.pos_table", "next_probs", "L{i}.lse"):
        assert f"``{name}``" in module.__doc__, name
    for f in dataclasses.fields(TraceDescription):
        assert f"    {f.name} : " in TraceDescription.__doc__, f.name
