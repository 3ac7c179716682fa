"""``--target`` on the command line (trace, steps, export) for Hugging Face encoder–decoders and the bundled
``translate`` model: the decoder reads the given output; a bad target is one line and exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.capture import Trace
from attnviz.cli import main

from .factories import SOURCE, TARGET


def _one_error_line(capsys, *needles):
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("attnviz: error:")]
    assert len(errors) == 1 and "Traceback" not in "\n".join(err), err
    assert all(n in errors[0] for n in needles), errors[0]


@pytest.mark.parametrize("name", ["t5", "marian"])
def test_trace_honours_the_target(name, encdec_folders, tmp_path, capsys):
    out = tmp_path / "t.npz"
    folder = str(encdec_folders[name])
    assert main(["trace", "--model", folder, "--text", SOURCE, "--target", TARGET, "-o", str(out)]) == 0
    t = Trace.load(out)
    assert [tok for tok in t.tokens[1:-1]] == TARGET.split() and t.tokens[-1] == "</s>"
    assert t.src_tokens[:6] == SOURCE.split()
    assert t.meta["decoder_input"] == "target" and t.meta["target_text"] == TARGET
    for key in ("enc.L1.probs", "L1.probs", "L1.cross.probs", "L1.cross.x_kv", "next_probs"):
        assert key in t
    assert t["L0.cross.probs"].shape == (4, len(t.tokens), len(t.src_tokens))
    greedy = tmp_path / "g.npz"
    assert main(["trace", "--model", folder, "--text", SOURCE, "-o", str(greedy)]) == 0
    assert Trace.load(greedy).meta["decoder_input"] == "greedy"


def test_steps_on_cross_attention_with_a_target(encdec_folders, capsys):
    assert main(["steps", "--model", str(encdec_folders["bart"]), "--text", SOURCE, "--target", TARGET,
                 "--part", "cross", "--layer", "1", "--head", "2", "--query", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["part"] == "cross" and doc["query_token"] == "→ chat"  # position 2 reads "le", writes "chat"
    assert doc["key_tokens"] == ["<s>", *SOURCE.split(), "</s>"]
    assert doc["kv_source"] == "recomputed" and doc["max_error"] < 1e-5


def test_export_with_a_target_labels_rows_by_the_produced_token(encdec_folders, tmp_path, capsys):
    out, data = tmp_path / "cross.png", tmp_path / "cross.csv"
    assert main(["export", "--model", str(encdec_folders["pegasus"]), "--text", SOURCE, "--target", TARGET,
                 "--view", "head-map", "--part", "cross", "--layer", "0", "--head", "1", "-o", str(out),
                 "--data", str(data)]) == 0
    assert out.stat().st_size > 1000
    text = data.read_text(encoding="utf-8")
    assert "→ le" in text and "→ tapis" in text


def test_translate_model_takes_a_target(tmp_path):
    out = tmp_path / "t.npz"
    target = "lo wufa grano un miro pika na vidas"
    assert main(["trace", "--model", "translate", "--text", "the big dog sees a small cat", "--target",
                 "na vidas", "-o", str(out)]) == 0
    t = Trace.load(out)
    assert t.tokens == ["[BOS]", "na", "vidas", "[EOS]"] and t.meta["decoder_input"] == "target"
    assert "correct" not in t.meta  # the reference check judges the model's own output only
    assert main(["trace", "--model", "translate", "--text", "the big dog sees a small cat", "-o", str(out)]) == 0
    assert Trace.load(out).meta["output_text"] == target  # without --target: its own greedy output


@pytest.mark.parametrize("args,needles", [
    (["--model", "{t5}", "--text", SOURCE, "--target", "   "], ["the target is empty"]),
    (["--model", "{bart}", "--text", SOURCE, "--target", " ".join(["the"] * 60)], ["the target has", "shorten"]),
    (["--model", "coref", "--text", "the cat sat", "--target", "le chat"], ["encoder model"]),
    (["--model", "translate", "--text", "the big dog sees a small cat", "--target", "blah"], ["does not know"]),
])
@pytest.mark.parametrize("command", ["trace", "steps"])
def test_a_bad_target_is_one_line_and_exit_2(command, args, needles, encdec_folders, tmp_path, capsys):
    args = [a.format(**{k: str(v) for k, v in encdec_folders.items()}) for a in args]
    extra = ["-o", str(tmp_path / "t.npz")] if command == "trace" else []
    assert main([command, *args, *extra]) == 2
    _one_error_line(capsys, *needles)
    assert not (tmp_path / "t.npz").exists()


def test_target_with_a_scene_is_refused(tmp_path, capsys):
    scene = tmp_path / "s.json"
    # a valid scene: --target is refused for being beside --scene, not for the scene's content
    scene.write_text('{"format": "attnviz-scene", "version": 1, "model": "translate", "text": "el gato"}',
                     encoding="utf-8")
    assert main(["export", "--scene", str(scene), "--target", "x", "-o", str(tmp_path / "f.png")]) == 2
    _one_error_line(capsys, "--target")


def test_the_trace_arrays_agree_with_next_probs(encdec_folders, tmp_path):
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", str(encdec_folders["mbart"]), "--text", SOURCE, "-o", str(out)]) == 0
    t = Trace.load(out)
    np.testing.assert_allclose(t["next_probs"].sum(-1), 1.0, atol=1e-5)
    assert np.array_equal(t["prediction"], t["next_probs"][-1])
