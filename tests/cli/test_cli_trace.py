"""`attnviz trace`: writes a loadable Trace; bad input gives one line and exit code 2."""

import numpy as np
import pytest
import torch

from attnviz.capture import Trace
from attnviz.cli import main
from attnviz.models import ModelConfig, build_model
from attnviz.models.checkpoint import save_checkpoint
from attnviz.text import Tokenizer

SENTENCES = ["the animal didn't cross the street because it was too tired", "the cat sat on the mat"]


@pytest.fixture
def model_dir(tmp_path):
    torch.manual_seed(0)
    tok = Tokenizer.build("word", SENTENCES, prefix=["[CLS]"])
    cfg = ModelConfig(kind="encoder", vocab_size=len(tok.vocab), n_layers=2, n_heads=2, d_model=16, max_len=16)
    model = build_model(cfg)
    return save_checkpoint(tmp_path / "tiny", model, cfg, {"task": None, "labels": ["a", "b"]}, tokenizer=tok)


def test_trace_writes_the_documented_keys(model_dir, tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", str(model_dir), "--text", SENTENCES[0], "-o", str(out)]) == 0
    t = Trace.load(out)
    assert t.tokens[:3] == ["[CLS]", "the", "animal"]
    T = len(t.tokens)
    for i in range(2):
        assert t[f"L{i}.x"].shape == (T, 16)
        assert t[f"L{i}.q"].shape == (2, T, 8)
        assert t[f"L{i}.probs"].shape == (2, T, T)
        assert t[f"L{i}.mask"].shape == (T, T)
        np.testing.assert_allclose(t[f"L{i}.probs"].sum(-1), 1.0, atol=1e-5)
    assert t["rollout"].shape == (T, T)
    assert t["prediction"].shape == (2,)
    assert t.meta["n_heads"] == 2 and t.meta["kind"] == "encoder"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--model", "no-such-model", "--text", "x"], "unknown model"),
        (["--text", "   "], "empty"),
        (["--text", " ".join(["the"] * 40)], "at most 16"),
        (["--image", "nothing.png"], "text model"),
    ],
)
def test_trace_bad_input_is_one_line_exit_2(model_dir, tmp_path, capsys, argv, fragment):
    if "--model" not in argv:
        argv = ["--model", str(model_dir), *argv]
    code = main(["trace", *argv, "-o", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and fragment in err
    assert not (tmp_path / "t.npz").exists()


def test_unwritable_output_is_refused_before_work(model_dir, tmp_path, capsys):
    code = main(["trace", "--model", str(model_dir), "--text", "the cat", "-o", str(tmp_path / "nodir" / "t.npz")])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_truncate_flag_cuts_and_notes(model_dir, tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["trace", "--model", str(model_dir), "--text", " ".join(["the"] * 40), "--truncate", "-o", str(out)]) == 0
    t = Trace.load(out)
    assert len(t.tokens) == 16 and "truncated" in t.meta["notice"]
    assert "truncated" in capsys.readouterr().err


def test_pickled_weights_are_refused(tmp_path, model_dir, capsys):
    (model_dir / "model.safetensors").rename(model_dir / "pytorch_model.bin")
    code = main(["trace", "--model", str(model_dir), "--text", "the cat", "-o", str(tmp_path / "t.npz")])
    assert code == 2 and "pickle" in capsys.readouterr().err


def test_unknown_subcommand_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_trace_help_says_what_a_long_input_stores(capsys, monkeypatch):
    """The help names what is stored at each length (q, k and lse from the on-demand length; probabilities below
    it), at the length the capture really switches at."""
    from attnviz.capture.on_demand import ON_DEMAND_T

    monkeypatch.setenv("COLUMNS", "2000")  # one line: no word cut at a hyphen
    with pytest.raises(SystemExit):
        main(["trace", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"From {ON_DEMAND_T} tokens" in text and f"Shorter than {ON_DEMAND_T} tokens" in text
    assert "log-sum-exp (lse)" in text and "q (after rotation), k" in text
    assert "probabilities are recomputed exactly when they are read" in text
    assert "(q, k, v, logits" not in text and "scores q·kᵀ·scale are never stored" in text
