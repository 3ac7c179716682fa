"""A cancelled training run whose folder holds a saved model still offers "Open trained model" (issue 36,
finding 12); one that saved nothing does not."""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(__file__))

from training_window import training_panel_and_kept  # noqa: E402


def _final(out_dir):
    result = SimpleNamespace(info={"cancelled": True})
    return SimpleNamespace(result=result, message=f"cancelled at step 3 of 100; checkpoint of step 2 kept in {out_dir}",
                           elapsed=1.0)


def test_open_trained_model_after_a_cancel_depends_on_the_saved_model(make_window, qtbot, assets, tmp_path):
    win, panel, kept = training_panel_and_kept(make_window, qtbot, assets, tmp_path)
    panel.out_dir = kept
    panel._on_completed(_final(kept))
    assert panel.open_button.isEnabled()
    with qtbot.waitSignal(win.model_loaded, timeout=60000) as got:  # and it opens that model
        qtbot.waitUntil(lambda: not win.lane.busy, timeout=30000)
        panel.open_button.click()
    assert got.args[0] == str(kept)
    empty = tmp_path / "nothing"  # negative control: cancelled before any checkpoint
    panel.out_dir = empty
    panel._on_completed(_final(empty))
    assert not panel.open_button.isEnabled()


def test_a_run_cancelled_part_way_in_the_app_can_be_opened(make_window, qtbot, tmp_path):
    """As a user does it: start a run in the Training tab, cancel it part-way. The app trained without
    checkpoints, so a cancel kept nothing and "Open trained model" stayed disabled; the run now saves
    ten checkpoints on its way (``training_panel.CHECKPOINTS``) and the last one opens."""
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    panel = win.training
    panel.task_box.setCurrentText("coref")
    qtbot.waitUntil(lambda: panel._defaults.get("name") == "coref", timeout=60000)
    steps = 200
    panel.steps_box.setValue(steps)
    panel.batch_box.setValue(4)
    out = tmp_path / "part-way"
    panel.out_edit.setText(str(out))
    panel.start()
    qtbot.waitUntil(lambda: len(panel.steps) >= 22, timeout=180000)  # past the first checkpoint (step 20)
    with qtbot.waitSignal(panel.finished, timeout=60000) as got:
        panel.cancel_button.click()
    assert "cancelled" in got.args[0].message and "checkpoint of step" in got.args[0].message
    qtbot.waitUntil(lambda: panel.start_button.isEnabled(), timeout=10000)
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert panel.open_button.isEnabled()
    qtbot.waitUntil(lambda: not win.lane.busy, timeout=30000)
    with qtbot.waitSignal(win.model_loaded, timeout=60000) as loaded:
        panel.open_button.click()
    assert loaded.args[0] == str(out) and win.loaded.task == "coref"
