"""Training panel (settings, progress, curves, cancel, attention timeline) and the window's keyboard/looks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from attnviz.training.snapshots import load_snapshots

TASK = "coref"  # an encoder task whose few steps and evaluation take about a second


def _window_with_training(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    panel = win.training
    panel.task_box.setCurrentText(TASK)
    qtbot.waitUntil(lambda: panel._defaults.get("name") == TASK, timeout=60000)
    return win, panel


def test_training_runs_in_the_background_and_replays_attention(make_window, qtbot, tmp_path):
    win, panel = _window_with_training(make_window, qtbot)
    win.tabs.setCurrentWidget(win.training_page)  # the loaded model's recorded curves (none for tiny-encoder)
    assert panel.loss_curve.getData()[0] is None or len(panel.loss_curve.getData()[0]) == 0
    out = tmp_path / "run"
    panel.steps_box.setValue(12)
    panel.batch_box.setValue(8)
    panel.seed_box.setValue(3)
    panel.out_edit.setText(str(out))
    live = []  # what the timeline shows when training ends: the snapshots that came with the progress
    panel.finished.connect(lambda _f: live.append(panel.timeline.snapshots))
    with qtbot.waitSignal(panel.finished, timeout=180000) as got:
        panel.start_button.click()
        assert panel.running and not panel.start_button.isEnabled() and panel.cancel_button.isEnabled()
    final = got.args[0]
    assert final.done and final.step == 12 and "done" in final.message
    assert live[0] is not None and live[0].steps[-1] == 12  # live during training, up to the last step
    # the held-out metrics in words, not keys
    assert "held-out: accuracy" in panel.status.text() and "_" not in panel.status.text().split("held-out:")[1]
    assert panel.plots.height() >= 150  # curves tall enough to read
    assert panel.progress.value() == 12 and panel.progress.maximum() == 12
    assert panel.steps == list(range(1, 13))
    assert all(math.isfinite(v) for v in panel.loss)
    xs, ys = panel.loss_curve.getData()
    assert list(xs) == panel.steps and np.allclose(ys, panel.loss)
    assert (out / "config.json").is_file()

    # the timeline replays the snapshots written next to the checkpoint
    snaps = load_snapshots(out)
    qtbot.waitUntil(lambda: panel.timeline.snapshots is not None, timeout=30000)
    tl = panel.timeline
    assert tl.slider.maximum() == len(snaps.steps) - 1 and tl.step == snaps.steps[-1]
    tl.slider.setValue(0)
    assert tl.step == 0 and tl.step_label.text().startswith("step 0 ")
    if tl.view is not None:
        np.testing.assert_allclose(tl.view.trace["L0.probs"], snaps.probs(0, 0, 0), rtol=0, atol=0)
        tl.layer_box.setValue(1)
        assert tl.view.res.layer == 1

    # open the trained model in the main views
    assert panel.open_button.isEnabled()
    qtbot.waitUntil(lambda: not win.lane.busy, timeout=30000)
    with qtbot.waitSignal(win.model_loaded, timeout=60000) as got:
        panel.open_button.click()
    assert got.args[0] == str(out) and win.loaded.task == TASK


def test_cancel_stops_between_steps(make_window, qtbot, tmp_path):
    win, panel = _window_with_training(make_window, qtbot)
    panel.steps_box.setValue(100000)
    panel.batch_box.setValue(4)
    panel.out_edit.setText(str(tmp_path / "cancelled"))
    panel.start()
    qtbot.waitUntil(lambda: len(panel.steps) >= 3, timeout=120000)
    with qtbot.waitSignal(panel.finished, timeout=60000) as got:
        panel.cancel_button.click()
    final = got.args[0]
    assert "cancelled" in final.message and final.step < 100000
    qtbot.waitUntil(lambda: panel.start_button.isEnabled(), timeout=10000)
    assert not panel.open_button.isEnabled()
    assert not (tmp_path / "cancelled").exists()  # nothing was saved: no empty run folder left behind


def test_training_problem_is_a_notice_not_a_crash(make_window, qtbot, tmp_path):
    win, panel = _window_with_training(make_window, qtbot)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    panel.out_edit.setText(str(blocker / "run"))  # a folder inside a file: cannot be created
    panel.steps_box.setValue(5)
    with qtbot.waitSignal(win.notice_shown, timeout=120000) as got:
        panel.start()
    text, level = got.args
    assert level == "error" and "cannot create output directory" in text and "Traceback" not in text
    qtbot.waitUntil(lambda: panel.start_button.isEnabled(), timeout=30000)
    assert panel.status.text() == text


# -- keyboard, looks, about, export -----------------------------------------------------------------------
def test_shortcuts_move_layer_and_head_and_wrap(make_window, qtbot):
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    win.activateWindow()
    win.setFocus()
    QTest.keyClick(win, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert win.selection.layer == 1
    QTest.keyClick(win, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert win.selection.layer == 0  # two layers: wraps around
    QTest.keyClick(win, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert win.selection.head == 1
    assert "Alt+Down" in win.actions_["next_layer"].toolTip()


def test_colour_map_and_presentation_reach_every_view(make_window, qtbot, qapp):
    win = make_window(model="tiny-encoder", text="the cat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.training is not None, timeout=90000)
    assert {v.style.cmap for v in win.views_area.views} == {"viridis"}  # the colour-blind-safe default
    win.actions_["cmap_cividis"].trigger()
    assert {v.style.cmap for v in win.views_area.views} == {"cividis"}
    base = qapp.font().pointSizeF()
    win.actions_["presentation"].trigger()
    try:
        from attnviz.gui.panels.appearance import PRESENTATION_VIEW_SCALE, screen_share

        share = screen_share(win.screen().size().height())
        assert {v.style.font_scale for v in win.views_area.views} == {round(PRESENTATION_VIEW_SCALE * share, 3)}
        assert {v.style.line_width for v in win.views_area.views} == {2.5}
        assert qapp.font().pointSizeF() == pytest.approx(base * max(1.0, 1.5 * share), rel=1e-3)
        assert win.settings.presentation
    finally:
        win.actions_["presentation"].trigger()
    assert qapp.font().pointSizeF() == pytest.approx(base)
    assert {v.style.font_scale for v in win.views_area.views} == {1.0}


def test_about_lists_versions_and_device(make_window, qtbot):
    import PySide6
    import pyqtgraph
    import torch

    from attnviz import __version__
    from attnviz.gui.dialogs.about_dialog import AboutDialog

    win = make_window(start=False, model="tiny-encoder", text="x")
    with qtbot.waitSignal(win.model_loaded, timeout=60000):
        win.start()
    box = AboutDialog(str(win.loaded.device), win)
    rows = dict(box.rows)
    assert rows["attnviz"] == __version__ and rows["PyTorch"] == torch.__version__
    assert rows["PySide6"] == PySide6.__version__ and rows["pyqtgraph"] == pyqtgraph.__version__
    assert rows["Device"] == "cpu"
    box.deleteLater()


def test_export_and_copy_actions_are_enabled(make_window):
    win = make_window(start=False)
    act = win.actions_["export"]
    assert act.isEnabled() and "export" in act.toolTip().lower()
    assert act.shortcut().toString() == "Ctrl+E"
    assert win.actions_["copy_figure"].shortcut().toString() == "Ctrl+Shift+C"

def test_recorded_history_of_a_loaded_model_is_drawn(qtbot):
    from attnviz.gui.panels.training_panel import TrainingPanel

    panel = TrainingPanel(["coref"])
    qtbot.addWidget(panel)
    history = {"step": [10, 20, 30], "loss": [2.0, 1.0, 0.5], "accuracy": [0.2, 0.6, float("nan")], "lr": [0, 0, 0]}
    panel.show_model_history(history, "coref")
    xs, ys = panel.loss_curve.getData()
    assert list(xs) == [10, 20, 30] and list(ys) == [2.0, 1.0, 0.5]
    assert list(panel.acc_curve.getData()[1]) == [0.2, 0.6, 0.0]
    assert "coref was trained" in panel.status.text()
    panel.show_model_history(None)
    assert panel.loss_curve.getData()[0] is None or len(panel.loss_curve.getData()[0]) == 0
