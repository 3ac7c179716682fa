"""A cancelled training run keeps the replay it showed live: the run's folder holds only the snapshots up to
its last checkpoint, and reloading them after the cancel took the replay back from 'step 189 (4/4)' to
'step 63 (2/2)' (seen at both sizes). A finished run still shows the folder's full set."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(__file__))

import attnviz  # noqa: E402
from attnviz.gui.workers import background_lane  # noqa: E402
from attnviz.training.snapshots import load_snapshots  # noqa: E402

from training_window import training_panel_and_kept  # noqa: E402

BUNDLED = Path(attnviz.__file__).resolve().parents[1] / "assets" / "models"


def _final(out_dir, cancelled: bool):
    info = {"cancelled": True} if cancelled else {"complete": True}
    return SimpleNamespace(result=SimpleNamespace(info=info), message=f"run in {out_dir}", elapsed=1.0)


def _panel_showing_live(make_window, qtbot, assets, tmp_path):
    win, panel, kept = training_panel_and_kept(make_window, qtbot, assets, tmp_path)
    # the start-up's own work settled first: the loaded model's stored replay must not land after the live one
    qtbot.waitUntil(lambda: win.loaded is not None and win.pages.snapshots_current and not win.lane.busy
                    and not background_lane().busy,
                    timeout=60000)
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
