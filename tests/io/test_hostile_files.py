"""Issue 38, findings 1–5: nothing a shared file, a model folder or a Python call can make attnviz write over.

Every case checks the file it protects byte for byte; each refusal has a positive control (the same
command where it is allowed, or the same check on a file that really is attnviz's)."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from tests._robust_models import SENTENCE, run_cli, save_text_model


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return save_text_model(tmp_path_factory.mktemp("hostile") / "tiny")


def _snapshot(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _scene(path, model, **more):
    doc = {"format": "attnviz-scene", "version": 1, "model": str(model), "text": SENTENCE, **more}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# -- 1. the scene's model folder is an input -------------------------------------------------------------
def test_force_never_writes_into_the_model_a_scene_names(tmp_path, capsys):
    named = save_text_model(tmp_path / "scene-model")
    (named / "snapshots.npz").write_bytes(b"the model's training snapshots")
    before = _snapshot(named)
    scene = _scene(tmp_path / "s.attnviz-scene.json", named)
    code, _, err = run_cli(capsys, "export", "--scene", scene, "-o", tmp_path / "f.png",
                           "--data", named / "snapshots.npz", "--force")
    assert code == 2 and err.count("\n") == 1 and "scene-model" in err, err
    assert _snapshot(named) == before
    # control: the same command with the data file outside the scene's model is not refused for that reason
    code, _, err = run_cli(capsys, "export", "--scene", scene, "-o", tmp_path / "f.png",
                           "--data", tmp_path / "f.npz", "--force")
    assert "model directory" not in err


def test_a_model_a_lessons_claim_names_is_an_input(tmp_path):
    from attnviz.lessons.named_inputs import named_inputs
    from attnviz.lessons.scene import scene_from_dict

    scene = scene_from_dict({"model": "m1", "image": "cat.png", "claim": {"kind": "word-order",
                             "with_positions": "/models/a", "without_positions": "/models/b"}},
                            base_dir=str(tmp_path))
    files, models = named_inputs([scene])
    assert files == [str(tmp_path / "cat.png")] and models == ["m1", "/models/a", "/models/b"]


# -- 2. a link is judged at both ends --------------------------------------------------------------------
def _hf_cache(tmp_path, model):
    """A Hugging Face cache laid out as the hub lays it out: snapshot files are links into blobs."""
    repo = tmp_path / "hf" / "hub" / "models--someone--tiny"
    blobs, snap = repo / "blobs", repo / "snapshots" / "abc123"
    blobs.mkdir(parents=True)
    snap.mkdir(parents=True)
    for i, f in enumerate([*model.iterdir(), None]):
        blob = blobs / f"blob{i}"
        if f is None:
            blob.write_bytes(b"\x89PNG the model card's architecture figure")
            name = "architecture.png"
        else:
            shutil.copyfile(f, blob)
            name = f.name
        (snap / name).symlink_to(os.path.relpath(blob, snap))
    return snap, blobs


def test_force_never_writes_through_a_snapshot_link_into_the_shared_blob(model, tmp_path, capsys, monkeypatch):
    snap, blobs = _hf_cache(tmp_path, model)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    before = _snapshot(blobs)
    code, _, err = run_cli(capsys, "export", "--model", snap, "--text", SENTENCE, "--view", "head-map",
                           "-o", snap / "architecture.png", "--force")
    assert code == 2 and err.count("\n") == 1, err
    assert _snapshot(blobs) == before


def test_a_link_into_a_hub_blob_store_is_refused_even_with_force(model, tmp_path):
    from attnviz.io.outputs import check_target
    from attnviz.io.paths import OverwriteError

    snap, blobs = _hf_cache(tmp_path, model)
    elsewhere = tmp_path / "slides" / "fig.png"
    elsewhere.parent.mkdir()
    elsewhere.symlink_to(snap / "architecture.png")  # a link outside the cache, pointing into it
    os.environ["HF_HOME"] = str(tmp_path / "hf")
    try:
        with pytest.raises(OverwriteError, match="Hugging Face cache"):
            check_target(elsewhere, force=True)
        check_target(tmp_path / "slides" / "new.png", force=True)  # control: a plain new file passes
    finally:
        del os.environ["HF_HOME"]


def test_inside_judges_where_a_link_lies_and_where_it_points(tmp_path):
    from attnviz.io.paths import inside

    (tmp_path / "folder").mkdir()
    (tmp_path / "away.txt").write_text("x")
    link = tmp_path / "folder" / "link.txt"
    link.symlink_to(tmp_path / "away.txt")
    assert inside(link, tmp_path / "folder")  # where it lies
    assert not inside(tmp_path / "away.txt", tmp_path / "folder")  # control
    out = tmp_path / "out.txt"
    out.symlink_to(tmp_path / "folder" / "new.txt")
    assert inside(out, tmp_path / "folder")  # where it points


# -- 3. a saved trace is recognised by its content marker -------------------------------------------------
def test_an_npz_with_tokens_and_meta_arrays_is_the_users_file(model, tmp_path, capsys):
    data = tmp_path / "data.npz"
    np.savez(data, tokens=np.array(["a", "b"]), meta=np.array("{}"), emb=np.ones((2, 3)))
    before = data.read_bytes()
    code, _, err = run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", data)
    assert code == 2 and "attnviz did not write it" in err
    assert data.read_bytes() == before
    # control: a trace attnviz saved carries the marker, and may be replaced without --force even
    # when the ownership record forgot it
    trace = tmp_path / "t.npz"
    assert run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", trace)[0] == 0
    os.utime(trace, (1, 1))
    assert run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", trace)[0] == 0


def test_the_marker_binds_the_meta_it_was_written_with(model, tmp_path, capsys):
    import zipfile

    from attnviz.capture.trace import Trace
    from attnviz.io.trace_marker import MARKER_NAME, has_trace_marker

    trace = tmp_path / "t.npz"
    assert run_cli(capsys, "trace", "--model", model, "--text", SENTENCE, "-o", trace)[0] == 0
    assert has_trace_marker(trace)
    with zipfile.ZipFile(trace) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    assert f"{MARKER_NAME}.npy" in members
    forged = tmp_path / "forged.npz"  # the marker copied onto another meta: not a trace attnviz wrote
    arrays = dict(np.load(trace))
    arrays["meta"] = np.array(json.dumps({"model_name": "other"}))
    np.savez(forged, **arrays)
    assert not has_trace_marker(forged)
    assert Trace.load(trace).tokens  # the marker is no attention array and loading still works
    assert MARKER_NAME not in Trace.load(trace).arrays


# -- 4. lecture packs: the ownership record decides, and a refused pack writes nothing -------------------
def test_a_pack_figure_the_user_edited_is_not_overwritten_and_nothing_is_written(model, tmp_path, capsys):
    pack = tmp_path / "pack"
    argv = ["export", "--model", model, "--text", SENTENCE, "--lecture-pack", pack]
    assert run_cli(capsys, *argv)[0] == 0
    assert run_cli(capsys, *argv)[0] == 0  # control: an untouched pack is rewritten
    edited = sorted(pack.glob("head-map_*.png"))[0]
    edited.write_bytes(edited.read_bytes() + b" the lecturer's annotations")
    before = _snapshot(pack)
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and edited.name in err and err.count("\n") == 1, err
    assert _snapshot(pack) == before and sorted(p.name for p in pack.iterdir()) == sorted(before)


def test_a_planted_generator_tag_grants_nothing(model, tmp_path, capsys):
    from attnviz.io.outputs import PACK_MARKER_TAG

    talk = tmp_path / "talk"
    talk.mkdir()
    (talk / "index.html").write_text(f"<html><head>{PACK_MARKER_TAG}</head><a href='rollout.png'>x</a>"
                                     "<img src='token-lines_L0.png'></html>")
    (talk / "token-lines_L0.png").write_bytes(b"the user's own figure")
    before = _snapshot(talk)
    code, _, err = run_cli(capsys, "export", "--model", model, "--text", SENTENCE, "--lecture-pack", talk)
    assert code == 2 and err.count("\n") == 1, err
    assert _snapshot(talk) == before


def test_a_pack_that_fails_midway_leaves_the_folder_as_it_found_it(model, tmp_path, monkeypatch):
    from attnviz.errors import AttnvizError
    from attnviz.export import batch
    from attnviz.export.headless import ensure_app
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace

    ensure_app()
    trace = run_trace(load_model(str(model), device="cpu"), text=SENTENCE)
    pack = tmp_path / "pack"
    batch.export_lecture_pack(trace, pack, ExportOptions(width=320, height=240))
    before = _snapshot(pack)
    real, calls = batch.export_one, []

    def failing(*args, **kw):
        calls.append(args[3])
        if len(calls) == 4:
            raise AttnvizError("the renderer failed")
        return real(*args, **kw)

    monkeypatch.setattr(batch, "export_one", failing)
    with pytest.raises(AttnvizError, match="renderer failed"):
        batch.export_lecture_pack(trace, pack, ExportOptions(width=640, height=480))
    assert _snapshot(pack) == before and sorted(p.name for p in pack.iterdir()) == sorted(before)
    fresh = tmp_path / "fresh"
    calls.clear()
    with pytest.raises(AttnvizError):
        batch.export_lecture_pack(trace, fresh, ExportOptions(width=320, height=240))
    assert not fresh.exists()  # a folder the failed pack created is gone again


# -- 5. the Python API writes by the CLI's rules --------------------------------------------------------
def test_the_api_never_saves_over_the_model_it_loaded_nor_a_users_file(model, tmp_path):
    import attnviz
    from attnviz.errors import AttnvizError

    folder = tmp_path / "m"
    shutil.copytree(model, folder)
    before = _snapshot(folder)
    t = attnviz.load(str(folder), device="cpu").trace(SENTENCE)
    for name in ("config.json", "new.npz"):
        with pytest.raises(AttnvizError, match="model directory"):
            t.save(folder / name)
        with pytest.raises(AttnvizError, match="model directory"):
            t.save(folder / name, force=True)  # the model it was made from: never, as --model's folder
    assert _snapshot(folder) == before
    report = tmp_path / "report.html"
    report.write_text("my report")
    with pytest.raises(AttnvizError, match="attnviz did not write it"):
        t.html().save(report)
    assert report.read_text() == "my report"
    t.html().save(report, force=True)  # control: asked for explicitly
    assert report.read_text().startswith("<!doctype html>")
    t.html().save(report)  # and now it is attnviz's own output: replaced without asking
    t.save(tmp_path / "t.npz")
    t.save(tmp_path / "t.npz")
    with pytest.raises(AttnvizError, match="does not exist"):
        t.save(tmp_path / "no" / "such" / "t.npz")


def test_a_staging_folder_a_killed_pack_left_is_removed_by_the_next(tmp_path):
    from attnviz.io.staging import STAGE_PREFIX, staged_files

    dead = subprocess_pid_that_exited()
    stale = tmp_path / f"{STAGE_PREFIX}{dead}-abc"
    stale.mkdir()
    (stale / "fig.png").write_bytes(b"half a pack")
    alive = tmp_path / f"{STAGE_PREFIX}{os.getpid() + 0}-live"  # this process: never removed
    alive.mkdir()
    with staged_files(tmp_path, ["a.txt"]) as stage:
        stage("a.txt").write_text("done")
    assert (tmp_path / "a.txt").read_text() == "done"
    assert not stale.exists() and alive.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.txt", alive.name])


def subprocess_pid_that_exited() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid
