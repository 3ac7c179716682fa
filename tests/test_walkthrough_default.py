"""One walkthrough default (head and query) for `attnviz steps`, export, the lecture pack and the lesson;
its row visibly mixes the values (the GUI side: tests/gui/test_walkthrough.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.analysis.walkthrough_default import MIX_TOP, walkthrough_default

TIRED = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def trace():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("coref", device="cpu"), text=TIRED, rollout=False)


def test_the_coref_walkthrough_opens_on_it_with_a_mixing_row(trace):
    layer, head, query = walkthrough_default(trace)
    assert trace.tokens[query] == "it"
    row = np.asarray(trace[f"L{layer}.probs"])[head, query]
    assert row.max() < MIX_TOP and np.sort(row)[-2] > 0.05  # z is a visible mix, not one value
    focus = trace.meta["focus"]  # the lecture head resolves "it" one-hot: not the walkthrough's
    assert np.asarray(trace[f"L{focus['layer']}.probs"])[focus["head"], focus["query"]].max() >= MIX_TOP


def test_a_focus_head_that_mixes_is_kept(trace):
    import copy

    t = copy.copy(trace)
    t.meta = {**trace.meta, "focus": {"layer": 0, "head": 1, "query": trace.meta["query_index"]}}
    assert walkthrough_default(t)[:2] == (0, 1)


def test_steps_cli_uses_it(trace, capsys):
    from attnviz.cli import main

    assert main(["steps", "--model", "coref", "--text", TIRED, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["layer"], doc["head"], doc["query"]) == walkthrough_default(trace)


def test_lesson_and_lecture_pack_use_it(trace, tmp_path, monkeypatch):
    from attnviz.export import batch
    from attnviz.lessons.claims import Workbench, scene_selection
    from attnviz.lessons.lesson import load_lesson

    want = walkthrough_default(trace)
    scene = next(s for s in load_lesson("attention").scenes if s.view == "steps")
    state = scene_selection(scene, Workbench().trace(scene))
    assert (state.layer, state.head, state.query) == want
    seen = []
    monkeypatch.setattr(batch, "export_one", lambda name, tr, s, path, *a, **k: seen.append((name, s)) or path)
    monkeypatch.setattr(batch, "_write_index", lambda *a, **k: None)
    batch.export_lecture_pack(trace, tmp_path, opts=batch.ExportOptions())
    walk = [(s.layer, s.head, s.query) for name, s in seen if name in ("steps", "matrix-form", "matrix-z")]
    assert walk and set(walk) == {want}


def test_an_encoder_decoder_opens_on_the_position_that_wrote_the_last_token():
    """Decoder position i produces token i + 1: the last position (after [EOS]) produced nothing, so the
    walkthrough of translate's cross- and decoder self-attention opens on the one before it."""
    from attnviz.runtime import load_model, run_trace

    t = run_trace(load_model("translate", device="cpu"), text="the cat sees the dog", rollout=False)
    n_dec = len(t.tokens)
    for part in ("cross", "self"):
        assert walkthrough_default(t, part)[2] == n_dec - 2
    assert walkthrough_default(t, "enc")[2] == len(t.src_tokens) - 1


def test_a_part_the_model_lacks_is_a_one_line_error(trace):
    from attnviz.errors import InputError

    with pytest.raises(InputError, match="no cross-attention"):
        walkthrough_default(trace, "cross")


@pytest.mark.parametrize("model", ["coref", "translate"])
def test_export_of_a_walkthrough_view_without_part_or_head_opens_on_it(model, tmp_path, capsys):
    """`export --view matrix-z` with no --part/--layer/--head: the default part (cross for an
    encoder–decoder) is chosen before the walkthrough's default head and query, not after."""
    from attnviz.cli import main

    out = tmp_path / "z.png"
    assert main(["export", "--model", model, "--view", "matrix-z", "-o", str(out), "--size", "640x360"]) == 0
    assert out.stat().st_size > 1000
