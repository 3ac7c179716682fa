"""The app's scenes and lesson mode: save what the window shows, open it again, step through a lesson."""

from __future__ import annotations

import json

import pytest

from attnviz.lessons.scene import load_scene

TIRED = "The animal didn't cross the street because it was too tired"


@pytest.fixture
def lesson_file(tmp_path):
    lesson = {"format": "attnviz-lesson", "version": 1, "name": "mini", "title": "Mini", "scenes": [
        {"title": "it finds the animal", "model": "coref", "text": TIRED, "view": "head-map",
         "caption": "'{query}' → '{target}' {here:.2f}", "claim": {"kind": "attends-to", "target": "animal"}},
        {"title": "the mask", "model": "induction", "text": "dragonflydragonfly", "view": "causal-mask", "layer": 1},
        {"title": "no scaling", "model": "coref", "text": TIRED, "view": "what-if", "whatif": {"scale": "none"}},
    ]}
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    return path


def test_lesson_stage_steps_through_live_scenes(qtbot, lesson_file):
    from attnviz.gui.lesson_mode import LessonStage
    from attnviz.lessons.lesson import load_lesson

    stage = LessonStage(load_lesson(lesson_file), measure_n=10)
    qtbot.addWidget(stage)
    stage.show()
    with qtbot.waitSignals([stage.scene_shown, stage.caption_measured], timeout=120_000) as caught:
        stage.show_scene(0)
    assert stage.caption.text().startswith("'it' → 'animal' ")  # measured, not the template
    assert stage.view.trace is not None and stage.selection.state.query == 8
    row = stage.view.controls  # figure first: the view's controls row hides, as in presentation mode
    widgets = [row.itemAt(i).widget() for i in range(row.count()) if row.itemAt(i).widget() is not None]
    assert widgets and not any(w.isVisible() for w in widgets)
    focus = stage.view.trace.meta["focus"]
    assert (stage.selection.state.layer, stage.selection.state.head) == (focus["layer"], focus["head"])
    # live: type another sentence, the figure follows (the model runs on the stage's lane); switch heads
    stage.input.setText("The animal didn't cross the street because it was too wide")
    with qtbot.waitSignal(stage.figure_updated, timeout=60_000):
        stage._typed()
    assert list(stage.view.trace.tokens)[-1] == "wide"
    head = stage.selection.state.head
    stage.step_selection("head", 1)
    assert stage.selection.state.head == (head + 1) % stage.trace.n_heads
    with qtbot.waitSignal(stage.scene_shown, timeout=60_000):
        stage.step_by(1)
    assert stage.index == 1 and type(stage.view).__name__ == "CausalMaskView"
    assert stage.view.panels is not None and stage.view.panels.numbers["future_weight"] == 0.0
    with qtbot.waitSignal(stage.scene_shown, timeout=60_000):
        stage.step_by(1)
    assert stage.index == 2 and stage.view.panels.panels[1].title == "No scaling"
    stage.step_by(1)  # past the last scene: stays
    assert stage.index == 2
    with qtbot.waitSignal(stage.figure_updated, timeout=60_000):
        stage.step_selection("head", 1)  # the comparison is recomputed for the new head
    assert f"head {stage.selection.state.head}" in stage.view.panels.title
    stage.step_by(-1)
    assert stage.index == 1 and stage.view is None  # the previous figure is gone until the scene's arrives
    qtbot.waitUntil(lambda: type(stage.view).__name__ == "CausalMaskView", timeout=60_000)
    with qtbot.waitSignal(stage.closed):
        stage.end()


def test_lesson_mode_is_presentation_mode_with_page_keys_for_scenes(make_window, qtbot, assets, tmp_path):
    from PySide6.QtCore import Qt

    from attnviz.gui.window.scene_actions import start_lesson

    lesson = {"format": "attnviz-lesson", "version": 1, "name": "tiny", "title": "Tiny", "scenes": [
        {"title": "one", "model": "tiny-encoder", "text": "the cat sat", "view": "head-map", "layer": 0, "head": 0},
        {"title": "two", "model": "tiny-encoder", "text": "the dog sat", "view": "token-lines", "layer": 1},
    ]}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    start_tab, tabs_before = win.tabs.currentIndex(), win.tabs.count()
    stage = start_lesson(win, str(path))
    qtbot.waitUntil(lambda: stage.view is not None, timeout=60000)
    mode = win.presentation_mode
    # the same presentation mode as F5: figure first, chrome hidden, large type
    assert mode.active and mode.figure is stage and win.tabs.currentWidget() is stage
    assert win.menuBar().isHidden() and win.tabs.tabBar().isHidden() and win.settings.presentation
    assert all(d.isHidden() for d in win.docks.values())
    assert stage.index == 0 and type(stage.view).__name__ == "HeadMapView" and stage.title.text() == "one"
    with qtbot.waitSignal(stage.scene_shown, timeout=60000):
        qtbot.keyClick(win, Qt.Key.Key_PageDown)
    assert stage.index == 1 and type(stage.view).__name__ == "TokenLinesView"
    # Alt+arrows move the scene's figure, not the window's hidden views
    window_head = win.selection.head
    head = stage.selection.state.head
    qtbot.keyClick(win, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert stage.selection.state.head == (head + 1) % stage.trace.n_heads and win.selection.head == window_head
    with qtbot.waitSignal(stage.scene_shown, timeout=60000):
        qtbot.keyClick(win, Qt.Key.Key_PageUp)
    assert stage.index == 0
    with qtbot.waitSignal(stage.closed):
        qtbot.keyClick(win, Qt.Key.Key_Escape)
    assert not mode.active and not win.menuBar().isHidden() and not win.settings.presentation
    assert win.tabs.count() == tabs_before and win.tabs.currentIndex() == start_tab
    assert win.actions_["next_head"].isEnabled()  # the window's own keys are back
    win.selection.update(head=0)
    win.actions_["next_head"].trigger()
    assert win.selection.head == 1


def test_save_scene_writes_what_the_window_shows(tmp_path):
    from types import SimpleNamespace

    from attnviz.gui.window.scene_actions import save_scene_as
    from attnviz.gui.window.state import WindowState
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection, SelectionState

    loaded = load_model("coref", device="cpu")
    notes = []
    win = SimpleNamespace(state=WindowState(), loaded=loaded, trace=run_trace(loaded, text=TIRED), model_ref="coref",
                          input_panel=SimpleNamespace(text=TIRED), current_figure=lambda: None,
                          selection=Selection(SelectionState(layer=1, head=2, query=8)),
                          settings=SimpleNamespace(colormap="magma", theme="dark"),
                          notify=lambda text, level: notes.append((text, level)))
    path = save_scene_as(win, str(tmp_path / "s.json"))
    scene = load_scene(path)
    assert (scene.model, scene.text, scene.layer, scene.head, scene.query) == ("coref", TIRED, 1, 2, 8)
    assert (scene.colormap, scene.theme, scene.view) == ("magma", "dark", "head-map")
    assert notes and "saved" in notes[-1][0]
    # the walkthrough's what-if switches are part of the scene; with its tab in front the view is "what-if"
    from attnviz.whatif import WhatIf

    switches = WhatIf(scale="none", ablate=frozenset({(0, 1)}))
    panel = SimpleNamespace(current_switches=lambda: switches)
    win.walkthrough = SimpleNamespace(whatif=panel)
    win.current_figure = lambda: panel
    scene = load_scene(save_scene_as(win, str(tmp_path / "w.json")))
    assert scene.view == "what-if" and scene.whatif_switches() == switches
    win.trace = None
    assert save_scene_as(win, str(tmp_path / "t.json")) is None and "nothing to save" in notes[-1][0]


def test_window_saves_a_scene_and_opening_it_restores_model_input_and_selection(make_window, qtbot, assets, tmp_path):
    from attnviz.gui.window.scene_actions import open_scene, save_scene_as

    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    assert win.actions_["save_scene"].shortcut().toString() == "Ctrl+S"
    assert any(a.text() == "&Lesson" for a in win.menuBar().actions())
    win.selection.update(layer=1, head=1, query=2)
    path = save_scene_as(win, str(tmp_path / "s.json"))
    scene = load_scene(path)
    assert (scene.model, scene.text, scene.layer, scene.head, scene.query) == ("tiny-encoder", "the cat sat", 1, 1, 2)
    win.selection.update(layer=0, head=0, query=0)
    win.input_panel.set_text("the dog", submit=True)
    qtbot.waitUntil(lambda: win.trace is not None and list(win.trace.tokens)[-1] == "dog", timeout=30000)
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        open_scene(win, str(path))
    qtbot.waitUntil(lambda: (win.selection.layer, win.selection.head, win.selection.query) == (1, 1, 2), timeout=30000)
    assert win.input_panel.text == "the cat sat"


def _whatif_tab(win):
    win.tabs.setCurrentWidget(win.walkthrough_page)
    win.walkthrough.setCurrentWidget(win.walkthrough.whatif)
    return win.walkthrough.whatif


def test_scene_saves_and_restores_the_whatif_switches(make_window, qtbot, assets, tmp_path):
    from attnviz.gui.window.scene_actions import open_scene, save_scene_as
    from attnviz.whatif import WhatIf

    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    qtbot.waitUntil(lambda: win.walkthrough is not None, timeout=60000)
    panel = _whatif_tab(win)
    qtbot.waitUntil(lambda: panel.loaded is win.loaded, timeout=30000)
    wanted = WhatIf(scale="none", temperature=round(10 ** (6 / 20), 3), positional=False, ablate={(0, 1), (1, 0)})
    assert panel.set_switches(wanted) == []
    assert panel.whatif() == wanted
    scene = load_scene(save_scene_as(win, str(tmp_path / "w.json")))
    assert scene.view == "what-if" and scene.whatif_switches() == wanted
    assert scene.whatif["ablate"] == [[0, 1], [1, 0]] and scene.whatif["positional"] is False
    panel.reset()  # back to as trained, on another tab
    win.tabs.setCurrentIndex(0)
    assert panel.whatif().is_default
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        open_scene(win, str(tmp_path / "w.json"))
    qtbot.waitUntil(lambda: panel.whatif() == wanted, timeout=30000)
    assert win.tabs.currentWidget() is win.walkthrough_page and win.walkthrough.currentWidget() is panel
    # the restored switches are what the model re-runs with
    qtbot.waitUntil(lambda: panel.comparison is not None and
                    panel.comparison.after.meta.get("whatif") == wanted.describe(), timeout=60000)
    # a scene without switches puts them back to as trained
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"format": "attnviz-scene", "model": "tiny-encoder", "text": "the cat sat"}),
                     encoding="utf-8")
    with qtbot.waitSignal(win.trace_shown, timeout=30000):
        open_scene(win, str(plain))
    qtbot.waitUntil(lambda: panel.whatif().is_default, timeout=30000)


def test_scene_opened_at_start_sets_the_switches_once_the_walkthrough_exists(make_window, qtbot, assets, tmp_path):
    from attnviz.gui.window.scene_actions import open_scene_at_start
    from attnviz.whatif import WhatIf

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": "attnviz-scene", "model": "tiny-encoder", "text": "the cat sat",
                                "view": "what-if", "whatif": {"scale": "none", "ablate": [[1, 1]]}}), encoding="utf-8")
    win = make_window(start=False)
    open_scene_at_start(win, str(path))
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    wanted = WhatIf(scale="none", ablate={(1, 1)})
    qtbot.waitUntil(lambda: win.walkthrough is not None, timeout=60000)
    panel = win.walkthrough.whatif
    assert panel.current_switches() == wanted  # saved again as they are, even before the panel has the model
    qtbot.waitUntil(lambda: win.walkthrough.currentWidget() is panel and panel.loaded is win.loaded, timeout=30000)
    assert panel.whatif() == wanted
