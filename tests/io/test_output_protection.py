"""Issue 29, item 1: no command writes into any model folder, nor over a file attnviz did not write (unless
--force); trace -o is .npz only; lecture packs go into new, empty or earlier-pack folders (by the ownership record); a symlink given
as the output is written through, never replaced."""

from __future__ import annotations

import os

import pytest

from tests._robust_models import SENTENCE, run_cli, save_text_model
from attnviz.models.checkpoint import load_checkpoint


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return save_text_model(tmp_path_factory.mktemp("prot") / "tiny")


@pytest.fixture
def other(tmp_path):
    """Another model on disk: what a careless -o could destroy."""
    return save_text_model(tmp_path / "other", seed=1)


def _trace(capsys, model, out, *more):
    return run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", out, *more)


def _still_loads(folder, before: dict) -> None:
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    load_checkpoint(folder, device="cpu")


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "new.npz", "snapshots.npz"])
def test_trace_never_writes_into_another_models_folder(model, other, capsys, name):
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    code, _, err = _trace(capsys, model, other / name)
    assert code == 2 and err.count("\n") == 1, err
    assert "model directory" in err or "trace is an .npz" in err
    _still_loads(other, before)


def test_export_data_never_writes_into_another_models_folder(model, other, capsys, tmp_path):
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    code, _, err = run_cli(capsys, "export", "--model", model, "--text", SENTENCE, "--view", "head-map",
                           "-o", tmp_path / "f.png", "--data", other / "snapshots.npz")
    assert code == 2 and "inside the model directory" in err and err.count("\n") == 1, err
    _still_loads(other, before)
    assert not (tmp_path / "f.png").exists()  # refused before anything was drawn


def test_a_hugging_face_folder_is_recognised_by_its_content(model, capsys, tmp_path):
    hf = tmp_path / "bert"
    hf.mkdir()
    (hf / "config.json").write_text('{"model_type": "bert"}')
    (hf / "pytorch_model.bin").write_bytes(b"weights")
    code, _, err = _trace(capsys, model, hf / "snap.npz")
    assert code == 2 and "inside the model directory" in err
    assert sorted(p.name for p in hf.iterdir()) == ["config.json", "pytorch_model.bin"]


def test_the_bundled_models_folder_is_protected_even_where_no_model_is_yet(model, capsys, tmp_path, monkeypatch):
    assets = tmp_path / "assets"
    (assets / "models" / "half-made").mkdir(parents=True)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(assets))
    code, _, err = _trace(capsys, model, assets / "models" / "half-made" / "t.npz")
    assert code == 2 and "inside the model directory" in err
    assert not list((assets / "models").rglob("*.npz"))


@pytest.mark.parametrize("suffix", [".json", ".safetensors", ".png", ""])
def test_trace_writes_only_npz(model, capsys, tmp_path, suffix):
    out = tmp_path / f"t{suffix}"
    code, _, err = _trace(capsys, model, out)
    assert code == 2 and "a trace is an .npz file" in err and not out.exists()


def test_a_file_attnviz_did_not_write_needs_force(model, capsys, tmp_path):
    mine = tmp_path / "notes.npz"
    mine.write_bytes(b"my own numbers")
    code, _, err = _trace(capsys, model, mine)
    assert code == 2 and "attnviz did not write it" in err and "--force" in err
    assert mine.read_bytes() == b"my own numbers"
    code, _, _ = _trace(capsys, model, mine, "--force")
    assert code == 0 and mine.read_bytes()[:2] == b"PK"


def test_attnviz_may_replace_its_own_output_until_the_user_changes_it(model, capsys, tmp_path):
    fig = tmp_path / "fig.png"
    argv = ["export", "--model", model, "--text", SENTENCE, "--view", "head-map", "-o", fig]
    assert run_cli(capsys, *argv)[0] == 0
    assert run_cli(capsys, *argv)[0] == 0  # re-running the same command is the lecturer's daily work
    fig.write_bytes(fig.read_bytes() + b"edited")  # now it is the user's file
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "attnviz did not write it" in err
    trace = tmp_path / "t.npz"
    assert _trace(capsys, model, trace)[0] == 0
    os.utime(trace, (1, 1))  # a saved trace is recognised by its content, not only by the record
    assert _trace(capsys, model, trace)[0] == 0


def test_names_a_command_derives_are_checked_when_written(model, capsys, tmp_path):
    theirs = tmp_path / "fig_L0_H1.png"
    theirs.write_bytes(b"the user's own figure")
    code, _, err = run_cli(capsys, "export", "--model", model, "--text", SENTENCE, "--view", "head-map",
                           "--layer", "0", "--all-heads", "-o", tmp_path / "fig.png")  # layer 0: fig_L0_H*.png
    assert code == 2 and "fig_L0_H1.png exists and attnviz did not write it" in err, err
    assert theirs.read_bytes() == b"the user's own figure"


def test_lecture_pack_goes_to_a_new_empty_or_earlier_pack_folder(model, capsys, tmp_path):
    pack = tmp_path / "pack"
    argv = ["export", "--model", model, "--text", SENTENCE, "--lecture-pack", pack]
    assert run_cli(capsys, *argv)[0] == 0
    figures = sorted(p.name for p in pack.iterdir())
    assert run_cli(capsys, *argv)[0] == 0  # the same folder again: the ownership record names its files
    assert sorted(p.name for p in pack.iterdir()) == figures
    for p in pack.glob("*.png"):
        os.utime(p, (1, 1))  # changed since attnviz wrote them: the user's now (issue 38), whatever the index says
    before = {p.name: p.read_bytes() for p in pack.iterdir()}
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "attnviz did not write it" in err and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in pack.iterdir()} == before  # checked before the first write
    assert run_cli(capsys, *argv, "--force")[0] == 0
    own = tmp_path / "talk"
    own.mkdir()
    (own / "index.html").write_text("<h1>my talk</h1>")
    code, _, err = run_cli(capsys, "export", "--model", model, "--text", SENTENCE, "--lecture-pack", own)
    assert code == 2 and "holds files no lecture pack made" in err and err.count("\n") == 1
    assert (own / "index.html").read_text() == "<h1>my talk</h1>" and len(list(own.iterdir())) == 1


def test_a_symlink_given_as_output_is_written_through(model, capsys, tmp_path):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "t.npz"
    link = tmp_path / "link.npz"
    link.symlink_to(target)  # dangling: the trace goes where it points
    assert _trace(capsys, model, link)[0] == 0
    assert link.is_symlink() and target.is_file() and target.read_bytes()[:2] == b"PK"
    assert _trace(capsys, model, link)[0] == 0 and link.is_symlink()
    mine = tmp_path / "store" / "mine.npz"
    mine.write_bytes(b"mine")
    link2 = tmp_path / "link2.npz"
    link2.symlink_to(mine)
    code, _, err = _trace(capsys, model, link2)  # what the link points to is protected like the file itself
    assert code == 2 and "attnviz did not write it" in err and mine.read_bytes() == b"mine"


def test_a_symlink_into_another_models_folder_is_refused(model, other, capsys, tmp_path):
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    link = tmp_path / "innocent.npz"
    link.symlink_to(other / "snapshots.npz")
    code, _, err = _trace(capsys, model, link)
    assert code == 2 and "inside the model directory" in err
    _still_loads(other, before)


def test_the_models_own_folder_stays_protected_with_force(model, capsys):
    code, _, err = _trace(capsys, model, model / "t.npz", "--force")
    assert code == 2 and "inside the model directory" in err
    assert sorted(p.name for p in model.iterdir()) == ["config.json", "model.safetensors"]


def test_train_out_refuses_a_folder_of_the_users_own_weights(capsys, tmp_path):
    out = tmp_path / "work"
    out.mkdir()
    (out / "snapshots.npz").write_bytes(b"my snapshots")
    (out / "model.safetensors").write_bytes(b"my weights")
    code, _, err = run_cli(capsys, "train", "--task", "order-sentiment", "--steps", "2", "--out", out)
    assert code == 2 and "no config.json" in err and "--force" in err
    assert (out / "snapshots.npz").read_bytes() == b"my snapshots"
    assert (out / "model.safetensors").read_bytes() == b"my weights"
