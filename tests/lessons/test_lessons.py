"""Lessons and their claims: the built-in lesson loads, claims are measured (and can fail), the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.lessons.claims import CLAIMS, Workbench, evaluate_claim, format_caption
from attnviz.lessons.lesson import lesson_names, load_lesson
from attnviz.lessons.scene import Scene

TIRED = "The animal didn't cross the street because it was too tired"


def test_builtin_attention_lesson_covers_the_seed_figures():
    assert "attention" in lesson_names()
    lesson = load_lesson("attention")
    kinds = [s.claim["kind"] for s in lesson.scenes]
    assert set(kinds) == set(CLAIMS)  # every claim kind is used
    assert all(s.title and s.caption for s in lesson.scenes)
    assert all(len(s.title) <= 60 for s in lesson.scenes)  # slide titles, not spec sentences


def test_lesson_files_are_validated(tmp_path):
    with pytest.raises(InputError, match="no lesson"):
        load_lesson(tmp_path / "none.json")
    bad = tmp_path / "l.json"
    bad.write_text(json.dumps({"format": "attnviz-lesson", "scenes": [{"model": "coref", "text": "x"}]}), encoding="utf-8")
    with pytest.raises(InputError, match="scene 1 has no title"):
        load_lesson(bad)


@pytest.fixture(scope="module")
def bench():
    return Workbench()


def test_attends_to_holds_on_the_lecture_sentence_and_fails_for_the_wrong_noun(bench):
    right = evaluate_claim(Scene(model="coref-emergent", text=TIRED, claim={"kind": "attends-to", "target": "animal"}),
                           bench, n=30)
    assert right.ok and right.here > 0.5 and right.held_out >= 0.9
    wrong = evaluate_claim(Scene(model="coref-emergent", text=TIRED, claim={"kind": "attends-to", "target": "street"}),
                           bench, n=30)
    assert not wrong.ok and wrong.here < 0.5
    assert format_caption("'{query}' → '{target}' {here:.2f}", right) == f"'it' → 'animal' {right.here:.2f}"


def test_the_pointer_supervised_coref_fails_the_per_row_deletion_check(bench):
    """The issue's finding, kept as a control: with "it" deleted, single rows of the supervised model's pointer
    head still fetch the noun (≈ 0.4–0.5), although the lecture head itself resolves "it" cleanly."""
    r = evaluate_claim(Scene(model="coref", text=TIRED, claim={"kind": "attends-to", "target": "animal"}), bench, n=30)
    assert not r.ok and r.values["weight"] > 0.9 and r.values["deleted"] > 0.3
    assert r.values["deleted_head"] == 0  # the head trained to point


def test_recomputation_claims_agree_with_the_trace(bench):
    for kind in ("six-steps", "matrix-form", "concat-heads"):
        claim = {"kind": kind, **({"min_tv": 0.0} if kind == "concat-heads" else {})}  # coref's heads look alike
        r = evaluate_claim(Scene(model="coref", text=TIRED, claim=claim), bench, n=3)
        assert r.ok and r.here < 1e-4, r.line


def test_causal_mask_and_permutation(bench):
    r = evaluate_claim(Scene(model="induction", text="dragonflydragonfly", layer=1, claim={"kind": "causal-mask"}),
                       bench, n=3)
    assert r.ok and r.values["cells"] == r.values["T"] * (r.values["T"] - 1) // 2
    p = evaluate_claim(Scene(model="order-sentiment-nopos", text="the food was good, not bad at all", layer=0, head=1,
                             claim={"kind": "permutation", "with_positions": "order-sentiment"}), bench, n=3)
    assert p.here < 1e-5 and p.values["with_positions"] > 1e-3
    assert p.values["contrast"] >= 0.3, p.line  # the position-free model's attention is not flat


def test_unknown_claims_are_input_errors(bench):
    with pytest.raises(InputError, match="unknown claim"):
        evaluate_claim(Scene(model="coref", text=TIRED, claim={"kind": "magic"}), bench)
    with pytest.raises(InputError, match="no claim"):
        evaluate_claim(Scene(model="coref", text=TIRED), bench)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "attnviz", *args], capture_output=True, text=True, timeout=600)


def test_lesson_check_prints_one_line_per_scene_and_exits_1_on_a_failed_claim(tmp_path):
    lesson = {"format": "attnviz-lesson", "version": 1, "name": "mini", "title": "mini", "scenes": [
        {"title": "right", "model": "coref-emergent", "text": TIRED, "claim": {"kind": "attends-to", "target": "animal"}},
        {"title": "wrong", "model": "coref-emergent", "text": TIRED, "claim": {"kind": "attends-to", "target": "street"}},
    ]}
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    out = _cli("lesson", "check", str(path), "--n", "20")
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 1 and len(lines) == 2
    assert " ok " in lines[0] and "FAIL" in lines[1] and "'it' → 'street'" in lines[1]
    lesson["scenes"] = lesson["scenes"][:1]
    path.write_text(json.dumps(lesson), encoding="utf-8")
    assert _cli("lesson", "check", str(path), "--n", "20").returncode == 0
    listed = _cli("lesson", "list")
    assert listed.returncode == 0 and listed.stdout.startswith("attention\t")
    bad = _cli("lesson", "check", str(tmp_path / "nope.json"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
