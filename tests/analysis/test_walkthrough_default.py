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


def test_an_encoder_decoder_opens_on_the_position_that_wrote_the_last_word():
    """Decoder position i produces token i + 1: the last position (after [EOS]) produced nothing and the
    one before it only [EOS] (issue 36: the walkthrough opened on "→ [EOS]" beside "(end): nothing
    written"), so translate's cross- and decoder self-attention open on the one that wrote the last word."""
    from attnviz.runtime import load_model, run_trace

    t = run_trace(load_model("translate", device="cpu"), text="the cat sees the dog", rollout=False)
    tokens = [str(x) for x in t.tokens]
    assert tokens[-1] == "[EOS]"  # the output ends with the marker (else the case is not the one tested)
    for part in ("cross", "self"):
        q = walkthrough_default(t, part)[2]
        assert tokens[q + 1] not in ("[EOS]", "[BOS]", "[PAD]") and q == len(tokens) - 3
    assert walkthrough_default(t, "enc")[2] == len(t.src_tokens) - 1


def test_the_last_word_row_skips_markers_only():
    """Negative control of the rule above: an output without the end marker keeps its last writing row;
    Hugging Face's markers ("</s>") count as markers too."""
    import types

    from attnviz.analysis.decoder_positions import last_word_row

    def fake(tokens):
        return types.SimpleNamespace(tokens=tokens, kind="encoder-decoder")

    assert last_word_row(fake(["[BOS]", "lo", "vidas", "[EOS]"])) == 1  # wrote "vidas"
    assert last_word_row(fake(["[BOS]", "lo", "vidas"])) == 1  # no [EOS]: the last position wrote nothing
    assert last_word_row(fake(["<pad>", "▁la", "▁vida", "</s>"])) == 1
    assert last_word_row(fake(["[BOS]", "[EOS]"])) == 0  # no word at all: the last that wrote anything


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


# -- issue 36: one default rule (part, head, query) for every tab, command and export ------------------
def _example_trace(name):
    from attnviz import api

    return api.load(name, device="cpu").trace().trace


def test_a_vision_classifier_opens_its_walkthrough_on_cls():
    """Finding 2: shapes opened on the last patch "3,3"; the classifier reads [CLS]."""
    from attnviz.analysis.walkthrough_default import default_selection

    t = _example_trace("shapes")
    layer, head, query = walkthrough_default(t)
    assert t.tokens[query] == "[CLS]" and t.tokens[-1] != "[CLS]"
    assert default_selection(t, "walkthrough")["query"] == 0


def test_translate_opens_on_cross_attention_at_a_row_that_wrote_something():
    """Finding 3: the walkthrough opened on "(end): nothing written"; `steps` on decoder self-attention."""
    from attnviz.analysis.decoder_positions import END_ROW, row_labels
    from attnviz.analysis.walkthrough_default import default_selection

    t = _example_trace("translate")
    for page in ("attention", "walkthrough"):
        d = default_selection(t, page)
        assert d["part"] == "cross"
    q = default_selection(t, "walkthrough")["query"]
    assert row_labels(t, "cross")[q] != END_ROW and q == len(t.tokens) - 3
    assert row_labels(t, "cross")[q] != "→ [EOS]" and row_labels(t, "cross")[q + 1] == "→ [EOS]"


def test_the_attention_head_is_the_focus_else_the_sharpest():
    """The attention views open on the focus head (coref), else the head whose rows point most clearly
    (recomputed here from the probabilities: mean over written rows of the row maximum)."""
    from attnviz.analysis.walkthrough_default import default_selection

    t = _example_trace("translate")
    d = default_selection(t, "attention")
    top = np.stack([np.asarray(t[f"L{l}.cross.probs"], np.float64)[:, :-1].max(-1).mean(-1)
                    for l in range(t.layers_in("cross"))])  # (L, H), the last (end) row left out
    assert (d["layer"], d["head"]) == np.unravel_index(np.argmax(top), top.shape)
    assert top[d["layer"], d["head"]] > top.min()  # negative control: the heads differ, the pick is not arbitrary


def test_steps_cli_defaults_to_the_rule_and_shortens_long_vectors(capsys):
    from attnviz.cli import main

    assert main(["steps", "--model", "translate"]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert "cross-attention" in head and "(end)" not in head
    assert "--json prints every number" in out
    x_line = next(line for line in out.splitlines() if line.startswith("x_i"))
    assert "(32 numbers)" in x_line and x_line.count(".") <= 8 + 1


def test_steps_prints_bias_terms_only_for_a_model_with_biases(trace):
    from attnviz.analysis.steps import compute_six_steps
    from attnviz.commands.steps import format_steps

    s = compute_six_steps(trace, 0, 0, 8)
    assert "x_i W_Q + b_Q" in format_steps(s, "coref")  # coref's projections have biases
    import dataclasses

    none = dataclasses.replace(s, b_Q=np.zeros_like(s.b_Q), b_K=np.zeros_like(s.b_K), b_V=np.zeros_like(s.b_V))
    text = format_steps(none, "llama-like")
    assert "b_Q" not in text and "b_K" not in text and "no bias terms" in text


def test_the_pack_of_a_translation_opens_its_walkthrough_figures_where_the_app_does(tmp_path, monkeypatch):
    """The pack used decoder self-attention for translate's walkthrough figures and L(last)·H0 for its
    cross-attention map; the app opens cross-attention at the rule's head and row."""
    from attnviz.analysis.walkthrough_default import default_selection
    from attnviz.export import batch

    t = _example_trace("translate")
    seen = []
    monkeypatch.setattr(batch, "export_one", lambda name, tr, s, path, *a, **k: seen.append((name, s)) or path)
    monkeypatch.setattr(batch, "_write_index", lambda *a, **k: None)
    batch.export_lecture_pack(t, tmp_path, opts=batch.ExportOptions())
    walk = default_selection(t, "walkthrough")
    got = {(s.part, s.layer, s.head, s.query) for name, s in seen if name in ("steps", "matrix-form", "matrix-z")}
    assert got == {(walk["part"], walk["layer"], walk["head"], walk["query"])} and walk["part"] == "cross"
    att = default_selection(t, "attention")
    assert [(s.layer, s.head) for name, s in seen if name == "head-map" and s.part == "cross"] == [
        (att["layer"], att["head"])]


def test_the_walkthrough_notice_names_the_row_as_the_walkthrough_does():
    """The status line said "the row of 'na'" for the row the walkthrough's picker and `steps` call
    "→ vidas" (the decoder position that read 'na' and wrote 'vidas'): one row, two names."""
    from attnviz.analysis.decoder_positions import row_labels
    from attnviz.analysis.walkthrough_default import default_selection, open_walkthrough
    from attnviz.selection import Selection

    t = _example_trace("translate")
    selection = Selection()
    selection.update(**default_selection(t, "attention"))
    said = open_walkthrough(selection, t)
    q = selection.query
    assert said is not None and (selection.layer, selection.head) != tuple(
        default_selection(t, "attention")[k] for k in ("layer", "head"))
    assert f"the row of {row_labels(t, 'cross')[q]!r}" in said
    assert f"the row of {str(t.query_tokens('cross')[q])!r}" not in said  # control: not the token it read


@pytest.mark.parametrize("model", ["coref", "translate"])
def test_the_pack_opens_its_attention_figures_on_the_apps_head(model, tmp_path, monkeypatch):
    """The pack's "Every head at a glance" and first "Who attends to whom" used the lowest-entropy head
    (coref L1·H2, translate decoder self L0·H0) while the app opens on coref's focus head L1·H3 and
    translate's sharpest cross-attention head."""
    from attnviz.analysis.walkthrough_default import default_selection
    from attnviz.export import batch

    t = _example_trace(model)
    seen = []
    monkeypatch.setattr(batch, "export_one", lambda name, tr, s, path, *a, **k: seen.append((name, s)) or path)
    monkeypatch.setattr(batch, "_write_index", lambda *a, **k: None)
    batch.export_lecture_pack(t, tmp_path, opts=batch.ExportOptions())
    att = default_selection(t, "attention")
    want = (att["part"], att["layer"], att["head"])
    first_map = next(s for name, s in seen if name == "head-map")
    model_fig = next(s for name, s in seen if name == "model")
    assert (first_map.part, first_map.layer, first_map.head) == want
    assert (model_fig.part, model_fig.layer, model_fig.head) == want
    lowest = batch.heads_of_interest(t)[0]  # negative control: the old pick differs from the app's
    assert ("self", *lowest) != want


def test_the_rollout_asks_about_the_rules_row_and_names_what_it_rolls_out():
    """translate's Rollout tab opened on "[EOS] [9]", the row that wrote nothing, with the title not
    saying it rolls out the decoder's self-attention alone."""
    from attnviz.analysis.decoder_positions import END_ROW, row_labels
    from attnviz.analysis.rollout_maps import RolloutSettings, compute_rollout_maps, rollout_question
    from attnviz.analysis.walkthrough_default import default_query

    t = _example_trace("translate")
    m = compute_rollout_maps(t, RolloutSettings())
    assert m.query == default_query(t, "self") and row_labels(t, "self")[m.query] != END_ROW
    question, left_out = rollout_question(t, "self", m.query, False)
    assert f"position {m.query}" in question and "writes" in question and "cross-attention" in left_out
    coref = _example_trace("coref")  # control: a classifier's question names its token, nothing left out
    cm = compute_rollout_maps(coref, RolloutSettings())
    assert cm.query == coref.meta["query_index"]
    assert rollout_question(coref, "self", cm.query, False) == ("Where does it [8] get its information?", None)


def test_a_decoders_gradient_row_is_shown_only_at_the_position_whose_prediction_it_explains():
    """The pack's "na [7]" slide drew gradients of the prediction after the last position under a title
    about position 7."""
    from attnviz.analysis.rollout_maps import RolloutSettings, compute_rollout_maps
    from attnviz.bench.traces import sample_trace

    lm = sample_trace("decoder", T=8, grad=True, n_layers=2, n_heads=2)
    last = compute_rollout_maps(lm, RolloutSettings(), query=7)
    assert last.maps["grad"] is not None and "next token" in last.grad_of
    inner = compute_rollout_maps(lm, RolloutSettings(), query=3)
    assert inner.maps["grad"] is None and "[7]" in inner.notes["grad"] and inner.grad_of == ""
    assert inner.maps["rollout"] is not None  # the attention rows are still drawn


@pytest.mark.parametrize("model", ["order-sentiment", "translate"])
def test_the_packs_rollout_asks_what_the_rollout_tab_asks(model, tmp_path, monkeypatch):
    """order-sentiment's pack asked "where does 'all' [9] get its information?" (the walkthrough's row) where the
    Rollout tab and `export --view rollout` ask about [CLS], the token the classifier reads."""
    from attnviz.analysis.rollout_maps import RolloutSettings, compute_rollout_maps, default_query
    from attnviz.export import batch

    t = _example_trace(model)
    seen = []
    monkeypatch.setattr(batch, "export_one", lambda name, tr, s, path, *a, **k: seen.append((name, s)) or path)
    monkeypatch.setattr(batch, "_write_index", lambda *a, **k: None)
    batch.export_lecture_pack(t, tmp_path, opts=batch.ExportOptions())
    state = next(s for name, s in seen if name == "rollout")
    asked = compute_rollout_maps(t, RolloutSettings(), state.query).query
    assert asked == default_query(t)
    walk = next(s for name, s in seen if name == "steps")
    if model == "order-sentiment":  # the case the fix is for: the walkthrough's row is not the classifier's token
        assert walk.query != asked and asked == 0
