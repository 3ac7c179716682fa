"""A notice whose error says more than one line (``.details``) has a Details… button with the full text."""

from __future__ import annotations

import json
import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from attnviz.errors import Message, ModelLoadError
from attnviz.gui.dialogs.notice_bar import NoticeBar


def test_details_button_shows_the_full_text_selectable_and_copyable(qtbot):
    bar = NoticeBar()
    qtbot.addWidget(bar)
    bar.show_notice("the model folder does not fit", "error", details="w1: 16 × 16, expected 32 × 32\nw2: 16, 32")
    assert bar.isVisible() and bar.details_button.isVisible()
    qtbot.mouseClick(bar.details_button, Qt.MouseButton.LeftButton)
    dialog = bar.dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert dialog.text.toPlainText() == "w1: 16 × 16, expected 32 × 32\nw2: 16, 32"
    assert dialog.text.isReadOnly()
    assert dialog.text.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    dialog.copy()
    assert QGuiApplication.clipboard().text() == "w1: 16 × 16, expected 32 × 32\nw2: 16, 32"
    dialog.close()
    # a notice with nothing more to say has no button; neither has one whose details repeat its line
    bar.show_notice("empty text", "warning")
    assert not bar.details_button.isVisible() and bar.details == ""
    bar.show_notice("same line", "warning", details="same line")
    assert not bar.details_button.isVisible()
    bar.show_notice("again", "error", details="more")
    bar.dismiss()
    assert not bar.isVisible() and bar.details == ""


def test_message_carries_an_errors_details():
    exc = ModelLoadError("one line")
    exc.details = "line 1\nline 2"
    m = Message.of(exc)
    assert m == "one line" and m.details == "line 1\nline 2"
    assert Message.of(ValueError("x")).details == ""
    assert Message.of(ModelLoadError("only")).details == ""  # details default to the message: nothing more


@pytest.fixture
def broken_folder(assets, tmp_path):
    bad = tmp_path / "broken"
    shutil.copytree(assets / "models" / "tiny-encoder", bad)
    doc = json.loads((bad / "config.json").read_text())
    doc["model"].update(d_model=32)  # weights of another shape: every mismatching weight is in .details
    (bad / "config.json").write_text(json.dumps(doc))
    return bad


def test_a_folder_that_does_not_fit_its_weights_lists_them_behind_details(make_window, qtbot, broken_folder):
    from attnviz.runtime import load_model

    with pytest.raises(ModelLoadError) as raised:
        load_model(str(broken_folder), device="cpu")
    expected = raised.value.details
    assert expected.count("\n") >= 2  # the long version: several weights
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    with qtbot.waitSignal(win.notice_shown, timeout=30000) as got:
        win.load_model(str(broken_folder))
    text, level = got.args
    assert level == "error" and "\n" not in text
    assert win.notice.isVisible() and win.notice.details_button.isVisible()
    assert win.notice.details == expected and "Traceback" not in win.notice.details
    win.notice.show_details()
    assert win.notice.dialog.text.toPlainText() == expected
    win.notice.dialog.close()
