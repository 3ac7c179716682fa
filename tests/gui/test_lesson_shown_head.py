"""A live lesson's caption and title stay true for what the figure shows (issue 36, audit a37).

Scene 3 ("Six steps, real numbers"): Alt+Right moved the figure to the next head ("'it' gets the most: 0.130") while
the caption under it still said "largest 0.39 on 'it'" with no word that it was about the scene's own head. Now the
caption says so, and names that head; Alt+Left back to the scene's head drops the note (control). Scenes whose figure
is a shipped training run or a timing (8, 9, 17) offered a typing line and "Enter: run the sentence" that changed
nothing: they offer neither now (control: scene 3 keeps both)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "models"


def test_another_head_gets_a_note_and_fixed_figures_no_typing_line(make_window, qtbot, monkeypatch):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    from test_layout_audit import _bundled

    from attnviz.gui.panels.presentation import leave_presentation
    from attnviz.gui.window.scene_actions import start_lesson

    _bundled()
    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    stage = start_lesson(win, "attention", view="steps")
    try:
        qtbot.waitUntil(lambda: stage.view is not None, timeout=120_000)
        qtbot.waitUntil(lambda: "measuring" not in stage.caption.text(), timeout=120_000)
        caption, title, own = stage.caption.text(), stage.title.text(), stage.selection.state
        assert "scene's own" not in caption and title == stage.scene.title  # control: the scene as measured
        assert stage.input.isVisibleTo(stage) and "Enter: run the sentence" in stage._keys_text \
            and stage._keys_text.endswith("Esc or F5: back to the app")  # the footer may show the hint for its seconds

        def alt(key):
            QTest.keyClick(QApplication.focusWidget() or win, key, Qt.KeyboardModifier.AltModifier)
            qtbot.waitUntil(lambda: stage.selection is not None, timeout=30_000)

        alt(Qt.Key.Key_Right)
        assert stage.selection.state.head != own.head  # the figure did move to another head
        moved = stage.caption.text()
        assert moved.startswith(caption), moved
        assert f"about the scene's own head (layer {own.layer} · head {own.head}), not the one shown" in moved, moved
        assert stage.title.text() == f"{title} (scene's head; figure: another head)", stage.title.text()
        alt(Qt.Key.Key_Left)
        assert stage.selection.state.head == own.head
        assert stage.caption.text() == caption and stage.title.text() == title  # back on the scene's own head

        for i, scene in enumerate(stage.lesson.scenes):
            if scene.view in ("scale-training", "path-length", "attention-cost"):
                assert scene.text is not None  # the lesson gives them a sentence: the stage decides
                stage.show_scene(i)
                assert not stage.input.isVisibleTo(stage), scene.title
                assert "Enter" not in stage._keys_text and "Alt+arrows" not in stage._keys_text, scene.title
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=30_000)


def test_the_note_names_what_differs():
    """Unit: the caption's qualifier and the title for each combination (no note when nothing differs)."""
    from attnviz.lessons.shown_note import TYPED_NOTE, moved_fields, shown_note, shown_title
    from attnviz.selection import SelectionState

    own, sel = SelectionState(layer=1, head=2, query=5), ("layer", "head", "query", "part")
    assert moved_fields(own, own, sel, typed=False) == set() and shown_note(False, set()) == ""
    assert shown_title("T", False, set()) == "T"
    other = SelectionState(layer=1, head=3, query=4)
    assert moved_fields(own, other, sel, typed=False) == {"head", "query"}
    assert moved_fields(own, other, sel, typed=True) == {"head"}  # a typed sentence's query is another sentence's
    assert moved_fields(own, other, ("layer", "query"), typed=True) == set()  # the figure draws no head
    assert shown_note(True, set()) == TYPED_NOTE
    assert shown_note(False, {"head"}, own, sel) == "(about the scene's own head (layer 1 · head 2), not the one shown)"
    assert shown_note(True, {"layer"}, own, sel) == \
        "(about the scene's own sentence and head (layer 1 · head 2), not the ones shown)"
    assert shown_title("“it” finds the animal", True, set()) == "“it” finds the animal (scene's sentence; figure: your sentence)"
    assert shown_title("T", False, {"head", "query"}) == "T (scene's head and query; figure: another head, another query)"
