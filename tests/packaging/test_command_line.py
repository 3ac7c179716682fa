"""`attnviz PATH…` routing, the no-display exit, `attnviz models`, --verbose and the log file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.cli import build_parser, main, route
from attnviz.io import assets_dir, bundled_models
from attnviz.io.path_kinds import UnknownPathError, classify_path, path_kinds, register_path_kind
from attnviz.logsetup import configure_logging, data_dir, log_path

ROOT = Path(__file__).resolve().parents[2]


def test_route_opens_the_app_for_paths_and_options_and_keeps_commands(tmp_path):
    img = tmp_path / "photo.png"
    img.write_bytes(b"")
    assert route([]) == ["gui"]
    assert route(["--presentation"]) == ["gui", "--presentation"]
    assert route([str(img)]) == ["gui", str(img)]
    assert route(["-v", str(tmp_path)]) == ["-v", "gui", str(tmp_path)]
    assert route(["missing/model"]) == ["gui", "missing/model"]  # a path that is not there: gui says so
    assert route(["eval", "--model", "coref"]) == ["eval", "--model", "coref"]
    assert route(["--verbose", "models"]) == ["--verbose", "models"]
    assert route(["evl"]) == ["evl"]  # a mistyped command is argparse's to reject, not a missing file


def test_verbose_is_accepted_before_and_after_the_command():
    parser = build_parser()
    assert parser.parse_args(route(["-v", "models"])).verbose is True
    assert parser.parse_args(route(["models", "--verbose"])).verbose is True
    assert parser.parse_args(route(["models"])).verbose is False
    args = parser.parse_args(route(["a.png", "b.npz", "--presentation"]))
    assert args.command == "gui" and args.paths == ["a.png", "b.npz"] and args.presentation


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="X11/Wayland only")
@pytest.mark.parametrize("argv", [[], ["gui"], ["--presentation"]])
def test_no_display_is_one_line_and_exit_code_2(argv):
    res = subprocess.run([sys.executable, "-m", "attnviz", *argv], env=_clean_env(), capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnviz: error: no display"), res.stderr


def test_a_path_that_is_not_there_is_one_line_and_exit_code_2(tmp_path, capsys):
    assert main([str(tmp_path / "nothing.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file" in err[0]
    (tmp_path / "notes.txt").write_text("hello")
    assert main([str(tmp_path / "notes.txt")]) == 2
    assert "not a model folder, an image" in capsys.readouterr().err


def test_classify_path_kinds(tmp_path):
    from PIL import Image

    model = assets_dir() / "models" / "coref"
    assert classify_path(model) == "model"
    assert classify_path(model / "config.json") == "model"
    img = tmp_path / "x.JPG"
    Image.new("RGB", (4, 4)).save(img, format="JPEG")
    assert classify_path(img) == "image"
    trace = tmp_path / "t.npz"
    np.savez(trace, tokens=np.array(["a"]), meta=np.array(json.dumps({"kind": "encoder"})))
    assert classify_path(trace) == "trace"
    other = tmp_path / "o.npz"
    np.savez(other, x=np.zeros(2))  # snapshots and other arrays are not traces
    with pytest.raises(UnknownPathError, match="not a model folder"):
        classify_path(other)
    with pytest.raises(UnknownPathError, match="without config.json"):
        classify_path(tmp_path)
    assert {"model", "image", "trace"} <= set(path_kinds())


def test_a_registered_kind_is_classified(tmp_path, monkeypatch):
    import attnviz.io.path_kinds as pk

    monkeypatch.setattr(pk, "_KINDS", list(pk._KINDS))  # leave the real registry as it was
    scene = tmp_path / "lesson.json"
    scene.write_text('{"scene": 1}')
    with pytest.raises(UnknownPathError):
        classify_path(scene)
    register_path_kind("scene", lambda p: p.suffix == ".json" and "scene" in p.read_text())
    assert classify_path(scene) == "scene"


def test_models_lists_every_bundled_model_with_task_and_metrics(capsys):
    assert main(["models", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in listed] == bundled_models()
    for m in listed:
        doc = json.loads((assets_dir() / "models" / m["name"] / "config.json").read_text(encoding="utf-8"))
        assert m["task"] == doc["task"] and m["metrics"] == doc["metrics"]
        assert m["kind"] == doc["model"]["kind"] and m["heads"] == doc["model"]["n_heads"]
    assert main(["models"]) == 0
    table = capsys.readouterr().out.splitlines()
    coref = next(line for line in table if line.startswith("coref "))
    acc = json.loads((assets_dir() / "models" / "coref" / "config.json").read_text())["metrics"]["accuracy"]
    assert f"accuracy {100 * acc:.1f}%" in coref and "encoder" in coref  # in words, as the app shows them


def test_models_with_no_bundled_models_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(tmp_path))
    assert main(["models"]) == 2
    assert capsys.readouterr().err.startswith("attnviz: error: no bundled models")


def test_log_file_in_the_data_folder_and_verbose_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNVIZ_DATA_DIR", str(tmp_path / "data"))
    assert data_dir() == tmp_path / "data" and log_path() == tmp_path / "data" / "attnviz.log"
    import logging

    try:
        assert configure_logging(verbose=False) == log_path()
        log = logging.getLogger("attnviz.test")
        log.debug("hidden detail")
        log.info("kept in the file")
        assert capsys.readouterr().err == ""  # INFO stays off the terminal
        configure_logging(verbose=True)
        log.debug("shown detail")
        err = capsys.readouterr().err
        assert "attnviz: DEBUG: shown detail" in err and err.count("shown detail") == 1  # no doubled handlers
        text = log_path().read_text(encoding="utf-8")
        assert "kept in the file" in text and "shown detail" in text and "hidden detail" not in text
    finally:
        configure_logging(verbose=False, log_file=False)


def test_data_dir_follows_xdg_on_linux(monkeypatch, tmp_path):
    if sys.platform in ("win32", "darwin"):
        pytest.skip("XDG is the Linux convention")
    monkeypatch.delenv("ATTNVIZ_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_dir() == tmp_path / "attnviz"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # the spec says: ignore, use the default
    assert data_dir() == Path.home() / ".local" / "share" / "attnviz"


def test_model_loading_shows_a_live_line_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    out = tmp_path / "t.npz"
    argv = ["trace", "--model", "coref", "--text", "the dog was tired", "-o", str(out)]
    monkeypatch.setenv("ATTNVIZ_PROGRESS", "1")  # as on a terminal
    assert main(argv) == 0
    assert "\rloading coref… " in capsys.readouterr().err
    monkeypatch.setenv("ATTNVIZ_PROGRESS", "0")  # as when piped
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "loading" not in err and "\r" not in err
