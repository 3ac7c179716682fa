"""``attnviz steps`` on Hugging Face folders: the rotary and GQA parts printed; a model that gives
probabilities only exits 2 with one line."""

from __future__ import annotations

import json

import pytest

from attnviz.cli import main

from .factories import make_model


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("steps_hf")
    return {name: make_model(name, root / name) for name in ("qwen2", "gemma2", "falcon", "deberta")}


def test_steps_on_a_rotary_gqa_model_prints_the_rotation_and_the_shared_kv_head(folders, capsys):
    code = main(["steps", "--model", str(folders["qwen2"]), "--text", "the cat sat on the mat", "--layer", "1",
                 "--head", "3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "reads kv head 1, shared by query heads 2, 3" in out
    assert "rotary" in out and "before rotation" in out and "by distance" in out


def test_steps_json_on_gemma2_has_softcap_window_and_recomputes(folders, capsys):
    code = main(["steps", "--model", str(folders["gemma2"]), "--text", "the cat sat on the mat because it was tired",
                 "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["softcap"] == 5.0 and doc["sliding_window"] == 4
    assert doc["max_error"] < 1e-4 and doc["rotary_error"] < 1e-6
    assert doc["mask"][0] == "-inf"  # the first key lies outside the 4-token window of the last query


def test_steps_on_a_model_with_probabilities_only_exits_2_with_one_line(folders, capsys):
    code = main(["steps", "--model", str(folders["deberta"]), "--text", "the cat sat"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("attnviz: error")]
    assert code == 2 and len(err) == 1
    assert err[0].startswith("attnviz: error: the trace has no x") and "not captured" in err[0]


def test_steps_on_falcon_read_by_hooks_recomputes_with_its_rotation(folders, capsys):
    code = main(["steps", "--model", str(folders["falcon"]), "--text", "the cat sat on the mat", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["max_error"] < 1e-4 and doc["rotary_error"] < 1e-6


def test_steps_on_a_long_input_prints_the_window_and_json_every_key(tmp_path, capsys):
    """Beyond STEP_KEYS keys the table shows the app's window around the query, numbered by position, and says
    so; --json keeps every key (the control: the same run's JSON has all of them)."""
    from attnviz.analysis.steps_window import STEP_KEYS

    folder = make_model("bert", tmp_path / "bert", max_pos=256)
    text = " ".join(["the cat sat on the mat"] * 30)
    args = ["steps", "--model", str(folder), "--text", text, "--layer", "0", "--head", "0", "--query", "100"]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("  ") and " k = " in line and " v = " in line]
    assert len(rows) == STEP_KEYS
    first = 100 - STEP_KEYS // 2
    assert rows[0].split()[0] == str(first) and rows[-1].split()[0] == str(first + STEP_KEYS - 1)
    assert f"keys {first}–{first + STEP_KEYS - 1} of " in out and "--json prints every key" in out
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["key_tokens"]) > STEP_KEYS


def test_a_text_folder_without_text_runs_on_the_sentence_the_app_opens_it_on(folders, capsys):
    from attnviz.text.fallback_text import FALLBACK_TEXT

    code = main(["steps", "--model", str(folders["qwen2"]), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert f"runs on the sentence {FALLBACK_TEXT!r}" in captured.err
    assert json.loads(captured.out)["input"] == FALLBACK_TEXT


@pytest.mark.parametrize("break_it, said", [
    (lambda p: p.rename(p.with_name("gone")), "not a directory and not a bundled model"),
    (lambda p: (p / "config.json").write_text('{"model_type": "qwen2",\n'), "not valid JSON"),
    (lambda p: (p / "config.json").unlink(), "has no config.json: not a model directory"),
])
def test_a_broken_folder_without_text_is_named_not_the_missing_text(tmp_path, capsys, break_it, said):
    folder = make_model("qwen2", tmp_path / "m")
    break_it(folder)
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["steps", "--model", str(folder)]))
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1
    assert said in err[0] and "--text" not in err[0]


def test_a_page_of_probabilities_only_names_its_layers_as_a_span(folders, tmp_path, capsys):
    """An HTML page (which keeps probabilities only) printed "not captured: x, q, k, v, z of layers 0, 1, …, 29": thirty
    numbers that read like a failure; the layers are named as spans, and why they were left out."""
    out = tmp_path / "page.html"
    code = main(["export", "--model", str(folders["qwen2"]), "--text", "the cat sat on the mat", "--view", "head-map",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and out.exists()
    note = next((line for line in err.splitlines() if "not captured" in line), "")
    assert "layers 0–1 (kept as probabilities only, enough for this figure)" in note, err
    assert "layers 0, 1" not in note
