"""File ▸ Open image… on a text model says so at once, before a file dialog (it opened the dialog and refused
the chosen image only after); on a vision model it opens the dialog (the control)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog


def _ready(make_window, qtbot, model, mode):
    win = make_window(model=model)
    qtbot.waitUntil(lambda: win.loaded is not None and win.input_panel.mode == mode, timeout=60000)
    return win


def _dialogs(monkeypatch) -> list:
    opened = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (opened.append(a), ("", ""))[1]))
    return opened


def test_a_text_model_refuses_before_the_dialog(make_window, qtbot, monkeypatch):
    win = _ready(make_window, qtbot, "tiny-encoder", "text")
    opened = _dialogs(monkeypatch)
    with qtbot.waitSignal(win.input_panel.notice, timeout=5000) as said:
        win.actions_["open_image"].trigger()
    assert opened == [] and "reads text" in said.args[0]


def test_a_vision_model_opens_the_dialog(make_window, qtbot, monkeypatch):
    win = _ready(make_window, qtbot, "tiny-vit", "image")
    opened = _dialogs(monkeypatch)
    win.actions_["open_image"].trigger()
    assert len(opened) == 1
