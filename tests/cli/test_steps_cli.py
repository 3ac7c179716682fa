"""``attnviz steps`` on a tiny model directory: JSON that matches the library, a table, clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.analysis import compute_six_steps
from attnviz.cli import main
from attnviz.models.checkpoint import save_checkpoint
from attnviz.runtime import load_model, run_trace
from attnviz.text.tokenizer import Tokenizer

from tests.models.tiny import build_tiny

TEXTS = ["the cat sat on the mat", "a dog ran to the park", "the bird sang"]


def _model_dir(tmp_path_factory, kind: str, prefix=()):
    tok = Tokenizer.build("word", TEXTS, prefix=list(prefix))
    model = build_tiny(kind, vocab_size=len(tok.vocab))
    path = tmp_path_factory.mktemp(kind) / "tiny"
    save_checkpoint(path, model, model.cfg, {"name": f"tiny-{kind}"}, tokenizer=tok)
    return str(path)


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    return _model_dir(tmp_path_factory, "encoder", prefix=["[CLS]"])


@pytest.fixture(scope="module")
def decoder_dir(tmp_path_factory):
    return _model_dir(tmp_path_factory, "decoder")


def _run(capsys, *argv):
    code = main(["steps", *argv, "--device", "cpu"])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_matches_the_library(capsys, encoder_dir):
    text = "the cat sat on the mat"
    code, out, err = _run(capsys, "--model", encoder_dir, "--text", text, "--layer", "1", "--head", "2",
                          "--query", "3", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    trace = run_trace(load_model(encoder_dir, device="cpu"), text=text, precision="float32")
    ref = compute_six_steps(trace, 1, 2, 3)
    assert doc["model"] == "tiny-encoder" and doc["input"] == text
    assert doc["key_tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat"]
    assert doc["query_token"] == "sat" and (doc["layer"], doc["head"], doc["query"]) == (1, 2, 3)
    for name in ("x_i", "W_Q", "W_K", "W_V", "b_Q", "q_i", "k", "v", "scores", "scaled", "mask", "masked",
                 "weights", "weighted", "z_i", "z_trace"):
        np.testing.assert_allclose(np.array(doc[name], dtype=float), getattr(ref, name), atol=1e-12, err_msg=name)
    assert doc["scale"] == pytest.approx(0.5)  # 1/√d_head with d_head = 4
    assert doc["max_error"] < 1e-5


def test_decoder_defaults_to_the_last_query_and_spells_masks(capsys, decoder_dir):
    code, out, _ = _run(capsys, "--model", decoder_dir, "--text", "a dog ran", "--json", "--query", "0")
    doc = json.loads(out)
    assert code == 0 and doc["mask"] == [0.0, "-inf", "-inf"] and doc["weights"] == [1.0, 0.0, 0.0]
    code, out, _ = _run(capsys, "--model", decoder_dir, "--text", "a dog ran", "--json")
    doc = json.loads(out)
    assert doc["query"] == 2 and doc["query_token"] == "ran" and "-inf" not in doc["mask"]
    assert doc["max_error"] < 1e-5


def test_table_output(capsys, encoder_dir):
    code, out, _ = _run(capsys, "--model", encoder_dir, "--text", "the bird sang", "--head", "1")
    assert code == 0
    assert "head 1" in out and "query 3 'sang'" in out and "step 6" in out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[1:3] == ["key", "score"])
    table = [line.split() for line in lines[header + 1 : header + 5]]  # j, key, score, scaled, mask, masked, weight
    assert [r[0] for r in table] == ["0", "1", "2", "3"] and all(len(r) == 7 for r in table)
    assert [r[1] for r in table] == ["[CLS]", "the", "bird", "sang"]
    assert sum(float(r[6]) for r in table) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("argv, message", [
    (["--layer", "9"], "layer 9 is out of range"),
    (["--head", "4"], "head 4 is out of range"),
    (["--query", "12"], "query 12 is out of range"),
    (["--part", "cross"], "no cross-attention"),
])
def test_bad_indices_print_one_line_and_exit_2(capsys, encoder_dir, argv, message):
    code, out, err = _run(capsys, "--model", encoder_dir, "--text", "the cat", *argv)
    assert code == 2 and out == ""
    assert err.startswith("attnviz: error: ") and message in err and err.count("\n") == 1


def test_unknown_model_is_one_line(capsys, tmp_path):
    code, _, err = _run(capsys, "--model", str(tmp_path / "nope"), "--text", "hi")
    assert code == 2 and "unknown model" in err and err.count("\n") == 1
