"""Issue 29, item 2: a malformed or hostile scene or lesson opened in the app is a visible notice, never a
crash (deep nesting used to end the app in a RecursionError) and never gigabytes of caption."""

from __future__ import annotations

import json

import pytest

SCENE = {"format": "attnviz-scene", "version": 1, "model": "tiny-encoder", "text": "the cat sat", "title": "t"}
HOSTILE = {
    "deep": "[" * 100_000,
    "deep-scene": '{"format": "attnviz-scene", "claim": ' + '{"a":' * 50_000,
    "wide caption": json.dumps({**SCENE, "caption": "{here:>2000000000}"}),
    "attribute caption": json.dumps({**SCENE, "caption": "{query.__class__.__mro__}"}),
    "huge layer": json.dumps({**SCENE, "layer": 10**30}),
    "not utf-8": b"\xff\xfe{".decode("latin-1"),
}


def _file(tmp_path, content: str):
    path = tmp_path / "shared.attnviz-scene.json"
    path.write_text(content, encoding="latin-1" if content.startswith("ÿ") else "utf-8")
    return str(path)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_opening_a_hostile_scene_is_a_notice(make_window, qtbot, tmp_path, name):
    from attnviz.gui.window.scene_actions import open_scene

    win = make_window(start=False)
    with qtbot.waitSignal(win.notice_shown, timeout=10_000) as got:
        open_scene(win, _file(tmp_path, HOSTILE[name]))
    text, level = got.args
    assert level == "error" and "Traceback" not in text and "\n" not in text and len(text) < 400
    assert win.notice.isVisible() and win.notice.text.endswith(text)


@pytest.mark.parametrize("name", ["deep", "wide caption", "attribute caption"])
def test_starting_a_hostile_lesson_is_a_notice(make_window, qtbot, tmp_path, name):
    from attnviz.gui.window.scene_actions import start_lesson

    content = HOSTILE[name]
    if content.startswith("{"):
        content = json.dumps({"format": "attnviz-lesson", "scenes": [json.loads(content)]})
    win = make_window(start=False)
    with qtbot.waitSignal(win.notice_shown, timeout=10_000) as got:
        assert start_lesson(win, _file(tmp_path, content)) is None
    assert got.args[1] == "error" and win.notice.isVisible()


def test_a_hostile_scene_given_at_start_is_a_notice(make_window, qtbot, tmp_path):
    from attnviz.gui.window.scene_actions import open_scene_at_start

    win = make_window(start=False)
    with qtbot.waitSignal(win.notice_shown, timeout=10_000):
        open_scene_at_start(win, _file(tmp_path, HOSTILE["deep-scene"]))
    assert "nested more than" in win.notice.text


def test_a_model_folder_with_a_deeply_nested_config_is_described_not_a_crash(tmp_path):
    from attnviz.gui.open_paths import _model_kind
    from attnviz.gui.panels.model_catalogue import describe_model_dir

    (tmp_path / "config.json").write_text("[" * 100_000)
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert _model_kind(str(tmp_path)) is None
    assert "nested more than" in describe_model_dir(tmp_path)["error"]
