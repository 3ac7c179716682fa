"""`attnviz trace/steps/export --model M` without --text or --image: the model's own example, said on stderr."""

import json

import numpy as np

import pytest
import torch

from attnviz.capture import Trace
from attnviz.cli import main
from attnviz.models import ModelConfig, build_model
from attnviz.models.checkpoint import save_checkpoint
from attnviz.tasks import get_task
from attnviz.text import Tokenizer


def test_trace_uses_the_models_example_sentence(tmp_path, capsys):
    example = get_task("coref").example_input()
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", "coref", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no --text or --image given" in err and repr(example) in err
    given = tmp_path / "given.npz"
    assert main(["trace", "--model", "coref", "--text", example, "-o", str(given)]) == 0
    a, b = Trace.load(out), Trace.load(given)
    assert a.tokens == b.tokens and len(a.tokens) > 5
    np.testing.assert_array_equal(a["L0.probs"], b["L0.probs"])


def test_export_uses_the_vision_models_example_image(tmp_path, capsys):
    out = tmp_path / "r.png"
    assert main(["export", "--model", "shapes", "--view", "rollout", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "its example image shapes-star.png" in err
    assert out.is_file() and out.stat().st_size > 0


def test_a_given_input_is_used_and_nothing_is_said(tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", "coref", "--text", "the cat sat on the mat", "-o", str(out)]) == 0
    assert "no --text" not in capsys.readouterr().err
    assert Trace.load(out).tokens[-3:] == ["on", "the", "mat"]


def test_a_model_without_a_task_asks_for_the_input(tmp_path, capsys):
    tok = Tokenizer.build("word", ["a b c"], prefix=["[CLS]"])
    cfg = ModelConfig(kind="encoder", vocab_size=len(tok.vocab), n_layers=1, n_heads=2, d_model=16, max_len=8)
    folder = save_checkpoint(tmp_path / "plain", build_model(cfg), cfg, {"task": None, "labels": ["x", "y"]},
                             tokenizer=tok)
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["trace", "--model", str(folder), "-o", str(tmp_path / "t.npz")]))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"attnviz: error: give --text TEXT or --image FILE: {folder} has no example input of its own"]
    assert json.loads((folder / "config.json").read_text())["task"] is None
    assert not (tmp_path / "t.npz").exists()


def test_trace_names_an_encoder_decoders_source_and_target_lengths(tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", "translate", "--text", "the big dog sees a small cat", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    t = Trace.load(out)
    assert f"({len(t.src_tokens)} source + {len(t.tokens)} target tokens," in said
    assert main(["trace", "--model", "coref", "--text", "the cat sat", "-o", str(out)]) == 0
    assert "source" not in capsys.readouterr().out  # control: an encoder has one input
