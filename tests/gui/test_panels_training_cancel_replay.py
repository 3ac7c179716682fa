"""A cancelled training run keeps the replay it showed live: the run's folder holds only the snapshots up to
its last checkpoint, and reloading them after the cancel took the replay back from 'step 189 (4/4)' to
'step 63 (2/2)' (seen at both sizes). A finished run still shows the folder's full set."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import attnviz
from attnviz.gui.workers import background_lane
from attnviz.training.snapshots import load_snapshots

BUNDLED = Path(attnviz.__file__).resolve().parents[1] / "assets" / "models"


def _final(out_dir, cancelled: bool):
    info = {"cancelled": True} if cancelled else {"complete": True}
    return SimpleNamespace(result=SimpleNamespace(info=info), message=f"run in {out_dir}", elapsed=1.0)


def _panel_showing_live(make_window, qtbot, assets, tmp_path):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    panel = win.training
    kept = tmp_path / "kept"
    shutil.copytree(assets / "models" / "tiny-encoder", kept)
    shutil.copy(BUNDLED / "coref" / "snapshots.npz", kept / "snapshots.npz")  # the folder's (checkpoint) set
    live = load_snapshots(BUNDLED / "induction")  # what the replay followed while the run went on
    panel.timeline.set_snapshots(live, causal=True, follow=True)
    panel.out_dir = kept
    return win, panel, live


def test_a_cancel_keeps_the_live_replay(make_window, qtbot, assets, tmp_path):
    win, panel, live = _panel_showing_live(make_window, qtbot, assets, tmp_path)
    panel._on_completed(_final(panel.out_dir, cancelled=True))
    # a reload from the folder runs on the background lane: once it is idle, its result has been shown
    qtbot.waitUntil(lambda: not background_lane().busy, timeout=30000)
    assert panel.timeline.snapshots is live and panel.open_button.isEnabled()


def test_a_finished_run_shows_the_folders_snapshots(make_window, qtbot, assets, tmp_path):  # the control
    win, panel, live = _panel_showing_live(make_window, qtbot, assets, tmp_path)
    panel._on_completed(_final(panel.out_dir, cancelled=False))
    qtbot.waitUntil(lambda: panel.timeline.snapshots is not live, timeout=30000)
    assert panel.timeline.snapshots is not None
