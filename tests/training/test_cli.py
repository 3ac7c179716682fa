"""``attnviz train`` / ``attnviz eval`` and ``make_assets``: outputs and exit codes."""

from __future__ import annotations

import json

import pytest

from attnviz.cli import main
from attnviz.models.checkpoint import load_checkpoint
from attnviz.training import make_assets


def test_train_then_eval_a_real_task(tmp_path, capsys):
    out = tmp_path / "sent"
    assert main(["train", "--task", "order-sentiment", "--steps", "25", "--out", str(out), "--device", "cpu",
                 "--snapshots", "3"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out[captured.out.index("{"):])
    assert report["task"] == "order-sentiment" and set(report["metrics"]) >= {"accuracy", "swapped_pair_accuracy"}
    assert "25/25" in captured.err  # the progress line
    loaded = load_checkpoint(out, device="cpu")
    assert loaded.info["trained_steps"] == 25 and (out / "snapshots.npz").is_file()

    assert main(["eval", "--model", str(out), "--device", "cpu"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert ev["task"] == "order-sentiment" and ev["seed"] != 12345
    assert set(ev["metrics"]) == set(loaded.info["metrics"])
    assert ev["recorded"] == loaded.info["metrics"]


@pytest.mark.parametrize("argv, message", [
    (["train", "--task", "no-such-task"], "unknown task"),
    (["eval", "--model", "no-such-model"], "unknown model"),
    (["train", "--task", "coref", "--device", "tpu"], "unknown device"),
])
def test_user_errors_are_one_line_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_unwritable_out_dir_is_exit_2(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["train", "--task", "coref", "--out", str(blocker / "model")]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot create output directory" in err and "\n" not in err


def test_eval_refuses_a_model_without_a_builtin_task(tmp_path, capsys):
    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model

    from attnviz.text.tokenizer import Tokenizer

    tok = Tokenizer.build("char", ["abc"])
    cfg = ModelConfig(vocab_size=len(tok.vocab), n_layers=1, n_heads=1, d_model=8)
    save_checkpoint(tmp_path, build_model(cfg), cfg, {"task": "my-own-data"}, tokenizer=tok)
    assert main(["eval", "--model", str(tmp_path), "--device", "cpu"]) == 2
    assert "not trained on a built-in task" in capsys.readouterr().err


def test_make_assets_swaps_in_the_model(tmp_path, capsys, monkeypatch):
    real_build = make_assets.build_asset
    def short_blind(task):
        # 40 steps cannot teach the content targets (one-adjective sentences, [CLS] on the adjective);
        # keep the one a model without positions meets from the start: it cannot tell pairs apart
        task = _short(task)
        task.targets = {"swapped_pair_accuracy": task.targets["swapped_pair_accuracy"]}
        return task

    monkeypatch.setattr(make_assets, "build_asset",
                        lambda task, root, **kw: real_build(short_blind(task), root, **kw))
    (tmp_path / "order-sentiment-nopos").mkdir()
    (tmp_path / "order-sentiment-nopos" / "stale.txt").write_text("old model")
    code = make_assets.main(["--out", str(tmp_path), "--only", "order-sentiment-nopos"])
    out = capsys.readouterr().out
    assert "order-sentiment-nopos: accuracy" in out and "trained" in out
    assert code == 0  # 40 steps of a model without positions still meets "cannot tell pairs apart"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["order-sentiment-nopos"]
    assert not (tmp_path / "order-sentiment-nopos" / "stale.txt").exists()
    loaded = load_checkpoint(tmp_path / "order-sentiment-nopos")
    assert loaded.info["seed"] == make_assets.ASSET_SEED and loaded.name == "order-sentiment-nopos"


def _short(task):
    task.steps = 40  # instance attributes: the class defaults are untouched
    # 40 steps cannot learn single sentences (a target of the real model), but a model without positions
    # still cannot tell swapped pairs apart: the one target kept, so exit 0 means "built and swapped in"
    task.targets = {k: v for k, v in task.targets.items() if k == "swapped_pair_accuracy"}
    return task
