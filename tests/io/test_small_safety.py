"""Issue 29, item 4 (the issue's section 5): folder modes after `train --out`, `--out .` refused before training,
a full disk said in words, no empty folder after a failed run, no stale `.part` of a killed write, and an
oversized image skipped by `heads --images`."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import stat
import struct
import subprocess
import sys
import zlib

import pytest

from tests._robust_models import SENTENCE, run_cli, save_text_model

TRAIN = ["train", "--task", "order-sentiment", "--steps", "2", "--snapshots", "2", "--device", "cpu"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return save_text_model(tmp_path_factory.mktemp("small") / "tiny")


def _no_training(monkeypatch):
    import attnviz.training.loop as loop

    def refuse(*a, **k):
        raise AssertionError("training started")

    monkeypatch.setattr(loop, "train", refuse)


@pytest.mark.parametrize("out", [".", "..", "{cwd}"])
def test_train_out_here_or_above_is_refused_before_training(capsys, tmp_path, monkeypatch, out):
    _no_training(monkeypatch)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run_cli(capsys, *TRAIN, "--out", out.format(cwd=work))
    assert code == 2 and err.count("\n") == 1 and "give a folder name" in err, err
    assert list(work.iterdir()) == []


def _modes(folder):
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}


def test_train_out_keeps_the_folders_mode_and_gives_every_file_one_mode(capsys, tmp_path):
    out = tmp_path / "private"
    assert run_cli(capsys, *TRAIN, "--out", out)[0] == 0
    modes = _modes(out)
    assert set(modes) == {"config.json", "model.safetensors", "snapshots.npz"}
    assert len(set(modes.values())) == 1, modes  # the weights were 0600, config and snapshots 0644
    os.chmod(out, 0o700)
    assert run_cli(capsys, *TRAIN, "--out", out)[0] == 0  # the same run again: swapped in as a new folder
    assert stat.S_IMODE(out.stat().st_mode) == 0o700  # a private folder stays private
    assert set(_modes(out).values()) == {0o600}  # and its files are no wider than it


def test_a_failed_train_says_no_space_and_leaves_no_empty_folder(capsys, tmp_path, monkeypatch):
    import safetensors.torch

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    out = tmp_path / "new" / "model"
    code, _, err = run_cli(capsys, *TRAIN, "--out", out)
    last = err.strip().splitlines()[-1]  # after the progress lines
    assert code == 2 and last.startswith("attnviz: error:") and last.endswith("no space left on the device"), err
    assert not out.exists()  # the folder this run created is gone (its parent, made by mkdir -p, may stay)
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    assert run_cli(capsys, *TRAIN, "--out", kept)[0] == 2
    assert (kept / "notes.txt").read_text() == "mine"  # a folder the run did not create is never removed


def test_a_full_disk_on_a_png_is_said_in_words(model, capsys, tmp_path, monkeypatch):
    real = pathlib.Path.write_bytes

    def full(self, data):
        if self.name.endswith(".part"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(pathlib.Path, "write_bytes", full)
    code, _, err = run_cli(capsys, "export", "--model", model, "--text", SENTENCE, "--view", "head-map",
                           "-o", tmp_path / "f.png")
    assert code == 2 and err.strip().endswith("no space left on the device") and "libpng" not in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 kB tmpfs (needs root; skipped elsewhere): a real full disk."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mnt / "filler").write_bytes(b"\0" * 60_000)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.parametrize("name", ["f.png", "f.svg", "t.npz"])
def test_a_really_full_disk_is_said_in_words(model, capsys, tiny_disk, name):
    view = ["trace"] if name.endswith(".npz") else ["export", "--view", "head-map"]
    code, _, err = run_cli(capsys, *view, "--model", model, "--text", SENTENCE, "-o", tiny_disk / name)
    assert code == 2 and err.strip().endswith("no space left on the device") and err.count("\n") == 1, err
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]  # no partial file, no .part


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_writes_part_file_is_removed_by_the_next_write_at_once(model, capsys, tmp_path):
    out = tmp_path / "t.npz"
    killed = tmp_path / f".t.npz.{_dead_pid()}-abcd1234.part"  # what a write killed a second ago leaves
    killed.write_bytes(b"")
    alive = tmp_path / f".t.npz.{os.getpid()}-efgh5678.part"  # a write still going on (this process)
    alive.write_bytes(b"")
    assert run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", out)[0] == 0
    assert not killed.exists() and alive.exists()


def _oversized_png(path, side: int = 10_000) -> None:
    """A valid 1-bit PNG of side × side pixels (100 M > the 80 M attnviz opens), small on disk."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = zlib.compress(b"\0" * ((side // 8 + 1) * side), 9)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def test_heads_images_skips_an_oversized_image_with_a_note(capsys, tmp_path):
    from PIL import Image

    from attnviz.tasks import get_task

    for i, img in enumerate(get_task("digits").probe_inputs()[:3]):
        Image.fromarray(img).save(tmp_path / f"d{i}.png")
    _oversized_png(tmp_path / "d1-huge.png")
    code, out, err = run_cli(capsys, "heads", "--model", "digits", "--images", tmp_path, "--json")
    assert code == 0, err
    assert "skipped" in err and "d1-huge.png" in err and "too large" in err
    assert json.loads(out)["n_inputs"] == 3
    for p in tmp_path.glob("d?.png"):
        p.unlink()
    code, _, err = run_cli(capsys, "heads", "--model", "digits", "--images", tmp_path)
    assert code == 2 and "every one is too large" in err.splitlines()[-1]
