"""Traces saved before the scores and outputs stopped being written (main at 095e8a4: ``L{i}.logits`` and ``L{i}.out``
members in the file) still open: the stored members are read as they are, and equal what the trace now recomputes.
Files made by ``/tmp/h34lean/save_old.py`` with that commit: a tiny attnviz decoder and a tiny Hugging Face Llama."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from attnviz.analysis.steps import compute_six_steps
from attnviz.capture import Trace

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name", ["saved_by_main_095e8a4_own.npz", "saved_by_main_095e8a4_hf.npz"])
def test_a_trace_saved_with_its_scores_still_opens_and_agrees(name, tmp_path):
    path = DATA / name
    members = zipfile.ZipFile(path).namelist()
    assert "L1.logits.npy" in members and "L1.out.npy" in members  # the old file really holds them
    t = Trace.load(path)
    assert "L1.logits" in t.arrays and "L1.out" in t.arrays  # read from the file, as stored
    np.testing.assert_allclose(t["L1.logits"], t._logits_from_qk("L1."), atol=1e-6)
    np.testing.assert_allclose(t["L1.out"], t._out_from_z("L1."), atol=1e-5)
    steps = compute_six_steps(t, 1, 1, len(t.tokens) - 1)
    assert steps.max_error < 1e-5
    # saved again: the scores are not written, still there (recomputed) and equal
    again = tmp_path / "again.npz"
    t.save(again)
    assert not [m for m in zipfile.ZipFile(again).namelist() if m.endswith(".logits.npy")]
    back = Trace.load(again)
    assert "L1.logits" in back and "L1.logits" not in back.arrays
    np.testing.assert_allclose(back["L1.logits"], t["L1.logits"], atol=1e-6)
    # control: a changed stored member is what an old file shows (it is read, not recomputed)
    t.arrays["L1.logits"] = t.arrays["L1.logits"] + 1.0
    assert np.abs(t["L1.logits"] - t._logits_from_qk("L1.")).max() > 0.5
