"""A window on tiny-encoder with its Training panel built, and a copy of that model as a run's kept folder."""

from __future__ import annotations

import shutil


def training_panel_and_kept(make_window, qtbot, assets, tmp_path):
    """(window, Training panel, folder): the folder a copy of tiny-encoder, as a cancelled run keeps it."""
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    kept = tmp_path / "kept"
    shutil.copytree(assets / "models" / "tiny-encoder", kept)
    return win, win.training, kept
