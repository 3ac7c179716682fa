"""A cancelled training run whose folder holds a saved model still offers "Open trained model" (issue 36,
finding 12); one that saved nothing does not."""

from __future__ import annotations

import shutil
from types import SimpleNamespace


def _final(out_dir):
    result = SimpleNamespace(info={"cancelled": True})
    return SimpleNamespace(result=result, message=f"cancelled at step 3 of 100; checkpoint of step 2 kept in {out_dir}",
                           elapsed=1.0)


def test_open_trained_model_after_a_cancel_depends_on_the_saved_model(make_window, qtbot, assets, tmp_path):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    panel = win.training
    kept = tmp_path / "kept"
    shutil.copytree(assets / "models" / "tiny-encoder", kept)
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
