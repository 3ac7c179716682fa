"""The F5 hint offers only the clicker keys that do something on the figure in front (issue 36: "Page Down" on
a lesson's scene said "next / previous step", and Page Up was offered on the first scene), and says where a
clicker stopped in the figure's own word: scene, part or step."""

from __future__ import annotations

import pytest

from attnviz.gui.panels.presentation_hint import leave_text


class _Slider:
    def __init__(self, value, maximum):
        self._v, self._m = value, maximum

    def value(self):
        return self._v

    def maximum(self):
        return self._m


class _Walkthrough:  # steps: a slider and set_step
    def __init__(self, value, n):
        self.slider = _Slider(value, n - 1)

    def set_step(self, i):
        pass


class _MatrixForm(_Walkthrough):  # parts: a section box read through its slider
    section_box = object()


class _Lesson:
    def __init__(self, n):
        self.scenes = [object()] * n


class _Stage:  # a lesson's page: scenes, step_by
    def __init__(self, index, n):
        self.lesson, self.index = _Lesson(n), index

    def step_by(self, delta):
        pass


class _Replay:  # a slider that Page Down does not move (no step_by / set_step)
    slider = _Slider(0, 3)


@pytest.mark.parametrize("fig, offered", [
    (_Stage(0, 17), "Page Down: next scene"),
    (_Stage(5, 17), "Page Down / Page Up: next / previous scene"),
    (_Stage(16, 17), "Page Up: previous scene"),
    (_Walkthrough(0, 6), "Page Down: next step"),
    (_MatrixForm(2, 5), "Page Down / Page Up: next / previous part"),
], ids=["first-scene", "middle-scene", "last-scene", "first-step", "middle-part"])
def test_only_the_keys_that_move_are_offered(fig, offered):
    text = leave_text(fig)
    assert text.startswith("Presenting · Esc or F5: back to the app") and text.endswith(" · " + offered), text
    if "Page Up" not in offered:
        assert "Page Up" not in text  # the first scene / step has nothing before it
    if "Page Down" not in offered:
        assert "Page Down" not in text


@pytest.mark.parametrize("fig", [None, _Replay(), _Stage(0, 1), _Walkthrough(0, 1)],
                         ids=["nothing", "no-steps", "one-scene", "one-step"])
def test_no_clicker_keys_where_they_do_nothing(fig):
    from attnviz.gui.panels.presentation_hint import step_keys

    assert step_keys(fig) == "" and leave_text(fig) == "Presenting · Esc or F5: back to the app"


def test_a_plain_flag_still_reads_as_before():  # control: callers that only know whether there are steps
    assert "Page Down / Page Up: next / previous step" in leave_text(True) and "Page" not in leave_text(False)


def test_the_end_of_a_lesson_names_scenes():
    from attnviz.gui.panels.presentation_hint import end_text

    assert end_text(_Stage(16, 17), +1) == "This is the last scene (17 of 17) · Page Up goes back · Esc or F5: back to the app"
    assert end_text(_Stage(0, 17), -1).startswith("This is the first scene (1 of 17) · Page Down goes on")
    assert end_text(_MatrixForm(4, 5), +1).startswith("This is the last part (5 of 5)")


def test_starting_a_lesson_offers_page_down_only(make_window, qtbot, monkeypatch):
    """The real app: Lesson ▸ Start on scene 1 — the hint on entering offers the next scene, not Page Up and
    not "step"; Page Up there says it is the first scene."""
    from pathlib import Path

    from attnviz.gui.panels.presentation import leave_presentation, presentation_mode
    from attnviz.gui.window.scene_actions import start_lesson

    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(Path(__file__).resolve().parents[2] / "assets"))
    stage = start_lesson(win, "attention")
    try:
        mode = presentation_mode(win)
        text = stage.hint_shown()  # a lesson's hint is in its footer line
        assert "Page Down: next scene" in text and "Page Up" not in text and "step" not in text, text
        mode.step(-1)  # Page Up on the first scene
        assert stage.index == 0 and "This is the first scene (1 of" in stage.hint_shown(), stage.hint_shown()
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=30_000)


def test_a_paged_all_heads_grid_offers_the_keys_that_turn_its_pages(qtbot):
    """F5 on All heads of a 32 × 32 model hides the ▲▼◀▶ buttons; the hint said only "Esc or F5", so a lecturer
    was not told how to reach the other pages (Alt+arrows move the head, the page follows)."""
    from PySide6.QtWidgets import QApplication

    from attnviz.bench.traces import sample_trace
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    def shown(n_layers, n_heads):
        view = ModelView(selection=Selection())
        qtbot.addWidget(view)
        view.resize(740, 700)
        view.show()
        view.set_trace(sample_trace("encoder", T=8, n_layers=n_layers, n_heads=n_heads, d_model=2 * n_heads))
        view.ensure_current()
        QApplication.processEvents()
        return view

    big = shown(32, 32)
    assert big.page_text() and "Alt+arrows: layer / head" in leave_text(big)
    small = shown(2, 4)  # control: one page holds every head, nothing to turn
    assert small.page_text() == "" and "Alt" not in leave_text(small)
