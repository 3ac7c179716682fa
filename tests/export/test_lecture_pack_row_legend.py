"""The lecture pack's matrix-form, Z = P V and many-heads figures of translate (issue 36): their grids cut every
token label to a few characters, and the cross-attention row after [EOS] read "(end): no…" with nothing in the
pack to say what it is. Those pages now carry a caption naming that row; a figure whose rows are whole carries
none, and a caption given by the user wins."""

from __future__ import annotations

import os
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture(scope="module")
def translate_trace():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("translate", device="cpu"), text="the big dog sees a small cat", grad=True)


def _captions(monkeypatch, tmp_path, trace, opts):
    import attnviz.export.batch as batch

    seen = {}
    real = batch.export_one

    def spy(name, trace, state, path, opts, style=None, step=None):
        seen.setdefault(name, []).append(opts.caption)
        return real(name, trace, state, path, opts, style, step)

    monkeypatch.setattr(batch, "export_one", spy)
    batch.export_lecture_pack(trace, tmp_path / "pack", opts)
    return seen


def test_the_cut_end_row_is_named_under_the_figures_that_cut_it(qapp, monkeypatch, tmp_path, translate_trace):
    from attnviz.analysis.decoder_positions import END_ROW
    from attnviz.figures.render import ExportOptions
    from attnviz.gui.walkthrough.matrix_grid_paint import short_label

    seen = _captions(monkeypatch, tmp_path, translate_trace, ExportOptions(width=1280, height=720))
    cut = short_label(END_ROW)
    assert cut != END_ROW  # the grids do cut it (else there is nothing to name)
    for name in ("matrix-form", "matrix-z", "many-heads"):
        assert seen[name] and all(f"“{cut}”" in c and "nothing was written" in c for c in seen[name]), (name, seen[name])
    # the control: figures with whole row labels (the head map names "(end): nothing written") carry no caption
    for name in ("steps", "head-map", "token-lines", "model"):
        assert seen.get(name) and not any(seen[name]), (name, seen.get(name))


def test_a_model_or_part_without_the_end_row_gets_no_caption(qapp, translate_trace):
    from attnviz.export.batch import row_legend
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    coref = run_trace(load_model("coref", device="cpu"), text="The animal didn't cross the street because it was tired")
    assert row_legend("matrix-form", SelectionState(), coref) == ""
    assert row_legend("matrix-form", SelectionState(part="self"), translate_trace) == ""  # decoder self-attention
    assert row_legend("matrix-form", SelectionState(part="cross"), translate_trace)


def test_a_users_caption_is_kept(qapp, monkeypatch, tmp_path, translate_trace):
    from attnviz.figures.render import ExportOptions

    seen = _captions(monkeypatch, tmp_path, translate_trace, replace(ExportOptions(width=640, height=360), caption="mine"))
    assert all(c == "mine" for cs in seen.values() for c in cs)
