"""Issue 14, items 3, 5, 6, 7: never overwrite an input or a model; numbers, disk-full and divergence in one line."""

from __future__ import annotations

import math
import os
import resource
import signal
import sys

import pytest

from tests._robust_models import SENTENCE, run_cli, save_text_model, save_vit_model, write_image
from attnviz.io.paths import refuse_overwrite, same_file
from attnviz.errors import AttnvizError


@pytest.fixture(scope="module")
def text_dir(tmp_path_factory):
    return save_text_model(tmp_path_factory.mktemp("safe") / "tiny")


@pytest.fixture(scope="module")
def vit_dir(tmp_path_factory):
    return save_vit_model(tmp_path_factory.mktemp("safe") / "vit")


# -- item 7: overwrites --------------------------------------------------------------------------------------
def test_trace_refuses_to_write_over_its_input_image_directly_or_through_links(vit_dir, tmp_path, capsys):
    img = write_image(tmp_path / "in.png")
    before = img.read_bytes()
    (tmp_path / "sym.png").symlink_to(img)
    os.link(img, tmp_path / "hard.png")
    for out in (img, tmp_path / "sym.png", tmp_path / "hard.png", tmp_path / "sub" / ".." / "in.png"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        code, _, err = run_cli(capsys, "trace", "--model", vit_dir, "--image", img, "-o", out)
        assert code == 2 and err.count("\n") == 1 and "is the input" in err, err
    assert img.read_bytes() == before


def test_export_refuses_to_write_over_its_input_image(vit_dir, tmp_path, capsys):
    img = write_image(tmp_path / "in.png")
    before = img.read_bytes()
    code, _, err = run_cli(capsys, "export", "--model", vit_dir, "--image", img, "--view", "rollout", "-o", img)
    assert code == 2 and "is the input" in err
    code, _, err = run_cli(capsys, "export", "--model", vit_dir, "--image", img, "--view", "rollout", "-o",
                           tmp_path / "f.png", "--data", img)
    assert code == 2 and "is the input" in err
    assert img.read_bytes() == before


def test_nothing_is_written_into_a_model_folder(text_dir, tmp_path, capsys):
    weights = (text_dir / "model.safetensors").read_bytes()
    for argv in (["trace", "-o", text_dir / "model.safetensors"], ["trace", "-o", text_dir / "new.npz"],
                 ["export", "--view", "head-map", "-o", text_dir / "fig.png"],
                 ["export", "--lecture-pack", text_dir / "pack"]):
        code, _, err = run_cli(capsys, *argv, "--model", text_dir, "--text", SENTENCE)
        assert code == 2 and err.count("\n") == 1 and "inside the model directory" in err, err
    assert (text_dir / "model.safetensors").read_bytes() == weights
    assert sorted(p.name for p in text_dir.iterdir()) == ["config.json", "model.safetensors"]


def test_data_file_and_figure_cannot_be_the_same_file(text_dir, tmp_path, capsys):
    out = tmp_path / "x.png"
    code, _, err = run_cli(capsys, "export", "--model", text_dir, "--text", SENTENCE, "--view", "head-map", "-o", out,
                           "--data", tmp_path / "x.png")
    assert code == 2 and "x.png" in err


def test_refuse_overwrite_helper():
    assert same_file("/tmp/a/../b", "/tmp/b")
    with pytest.raises(AttnvizError):
        refuse_overwrite("/tmp/b", inputs=[None, "/tmp/a/../b"])
    refuse_overwrite("/tmp/c", inputs=["/tmp/b"], folders=[None, "/nonexistent"])


def test_train_out_refuses_a_model_of_another_task_or_run_without_force(tmp_path, capsys, monkeypatch):
    other = save_text_model(tmp_path / "m", info={"task": "charlm"})
    before = (other / "model.safetensors").read_bytes()
    code, _, err = run_cli(capsys, "train", "--task", "order-sentiment", "--out", other, "--steps", "2")
    assert code == 2 and err.count("\n") == 1 and "model of task 'charlm'" in err and "--force" in err
    doc_run = {"task": "order-sentiment", "seed": 0, "steps": 5, "batch_size": 64, "lr": 3e-3}
    same_task = save_text_model(tmp_path / "m2", info=doc_run)
    code, _, err = run_cli(capsys, "train", "--task", "order-sentiment", "--out", same_task, "--steps", "2",
                           "--device", "cpu")
    assert code == 2 and "another run" in err and "steps 5 → 2" in err
    assert (other / "model.safetensors").read_bytes() == before
    code, out, err = run_cli(capsys, "train", "--task", "order-sentiment", "--out", other, "--steps", "2",
                             "--snapshots", "0", "--device", "cpu", "--force")
    assert code == 0, err
    assert (other / "model.safetensors").read_bytes() != before


# -- item 6: numbers -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--dpi", "0"], "argument --dpi: 0 is outside 10..2,400"),
    (["--dpi", "1000000000"], "argument --dpi"),
    (["--dpi", "-5"], "argument --dpi"),
    (["--font-scale", "nan"], "argument --font-scale: nan is not a finite number"),
    (["--scale", "inf"], "argument --scale"),
    (["--size", "16384x16384", "--scale", "8"], "131072x131072 pixels"),
    (["--size", "0x100"], "argument --size"),
    (["--size", "big"], "argument --size"),
    (["--layer", "-1"], "argument --layer"),
    (["--head", "2.5"], "argument --head"),
    (["--query", "1000"], "query 1000 does not exist"),
    (["--layer", "5"], "layer 5"),
])
def test_export_numbers_are_one_line(argv, message, text_dir, tmp_path, capsys):
    out = tmp_path / "x.png"
    code, _, err = run_cli(capsys, "export", "--model", text_dir, "--text", SENTENCE, "--view", "head-map",
                           "-o", out, *argv)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_pdf_pages_readers_reject_are_refused(text_dir, tmp_path, capsys):
    out = tmp_path / "x.pdf"
    code, _, err = run_cli(capsys, "export", "--model", text_dir, "--text", SENTENCE, "--view", "head-map",
                           "-o", out, "--size", "16384x16384", "--dpi", "10")
    assert code == 2 and "PDF page" in err and not out.exists()


def test_lecture_pack_query_out_of_range_is_one_line(text_dir, tmp_path, capsys):
    code, _, err = run_cli(capsys, "export", "--model", text_dir, "--text", SENTENCE, "--lecture-pack",
                           tmp_path / "pack", "--query", "1000")
    assert code == 2 and err.count("\n") == 1 and "query 1000 does not exist" in err, err
    assert not any((tmp_path / "pack").glob("*.png"))


@pytest.mark.parametrize("argv, message", [
    (["--lr", "1e10"], "argument --lr"), (["--lr", "inf"], "argument --lr"), (["--lr", "1e300"], "argument --lr"),
    (["--lr", "0"], "argument --lr"), (["--batch-size", "1000000000"], "argument --batch-size"),
    (["--steps", "0"], "argument --steps"), (["--seed", "-1"], "argument --seed"),
    (["--checkpoint-every", "-3"], "argument --checkpoint-every"),
])
def test_train_numbers_are_one_line(argv, message, tmp_path, capsys):
    code, _, err = run_cli(capsys, "train", "--task", "coref", "--out", tmp_path / "m", *argv)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "m").exists()


def test_training_memory_estimate_refuses_before_allocating(tmp_path, capsys, monkeypatch):
    from attnviz.models import validate

    monkeypatch.setattr(validate, "available_memory", lambda: 50 * 2**20)  # 50 MB free
    code, _, err = run_cli(capsys, "train", "--task", "order-sentiment", "--out", tmp_path / "m", "--batch-size",
                           "65536", "--device", "cpu")
    assert code == 2 and err.count("\n") == 1 and "of memory is available" in err, err


# -- item 3: divergence --------------------------------------------------------------------------------------
def test_a_diverging_run_exits_3_with_its_message_and_keeps_the_last_checkpoint(tmp_path, capsys, monkeypatch):
    from attnviz.commands.train import EXIT_DIVERGED
    from attnviz.models.checkpoint import load_checkpoint
    from attnviz.tasks import get_task

    task = get_task("order-sentiment")
    real_loss, calls = task.loss, []

    def loss(logits, batch):  # finite for 5 steps, then NaN (as a too-large learning rate would make it)
        value, correct, counted = real_loss(logits, batch)
        calls.append(1)
        return (value * math.nan if len(calls) > 5 else value), correct, counted

    task.loss = loss
    monkeypatch.setattr("attnviz.tasks.get_task", lambda name, seed=0: task)
    out = tmp_path / "m"
    code, stdout, err = run_cli(capsys, "train", "--task", "order-sentiment", "--out", out, "--steps", "50",
                                "--checkpoint-every", "2", "--snapshots", "3", "--device", "cpu")
    assert code == EXIT_DIVERGED == 3
    last = err.strip().splitlines()[-1]
    assert last.startswith("attnviz: error: training stopped: loss became nan at step 6")
    assert "checkpoint of step 4" in last and "Traceback" not in err
    kept = load_checkpoint(out, device="cpu")
    assert kept.info["trained_steps"] == 4 and kept.info["complete"] is False


# -- item 5: disk full ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["trace", "train"])
def test_a_full_disk_is_one_line_and_exit_2(kind, text_dir, tmp_path):
    out = tmp_path / ("t.npz" if kind == "trace" else "m")
    argv = (["trace", "--model", str(text_dir), "--text", SENTENCE, "-o", str(out)] if kind == "trace" else
            ["train", "--task", "order-sentiment", "--steps", "2", "--snapshots", "0", "--out", str(out)])
    log = tmp_path / "stderr.txt"
    pid = os.fork()  # a child of this process (torch already imported) with a file-size limit
    if pid == 0:
        code = 99
        try:
            sys.stderr = open(log, "w")
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail (EFBIG) like a full disk
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
            from attnviz.cli import main

            code = main([*argv, "--device", "cpu"])
            sys.stderr.flush()
        finally:
            os._exit(code)
    status = os.waitpid(pid, 0)[1]
    err = log.read_text()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("attnviz: error: cannot write") and "File too large" in last
    if kind == "trace":
        assert not out.exists() and not list(tmp_path.glob(".*part"))
    else:
        assert not (out / "config.json").exists() and not list(tmp_path.glob(".m.*"))
