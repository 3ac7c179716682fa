"""The window at 1280×720 (a common projector, issue 36 finding 13): the input dock one line tall, the head
map at least half the window's width and most of its height; at 1920×1080 the full input panel (control)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.slow


def _window(make_window, qtbot, w, h):
    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    win.showNormal()
    win.resize(w, h)
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    for _ in range(10):
        QApplication.processEvents()
    return win


@pytest.mark.xfail(strict=True, reason="the compact arrangement is not wired into the window: with it, window "
                   "tests left empty top-level QWidgets behind at random (issue 36, open)")
def test_1280x720_gives_the_head_map_the_room(make_window, qtbot):
    win = _window(make_window, qtbot, 1280, 720)
    line = QFontMetrics(win.input_panel.edit.font()).lineSpacing()
    dock = win.docks["InputDock"]
    assert win.input_panel.edit.height() < 2 * line + 16  # one line of text
    assert dock.height() < 2 * line + 60, f"input dock {dock.height()} px"
    head_map = win.views_area.docks["HeadMapView"] if "HeadMapView" in win.views_area.docks else \
        next(d for n, d in win.views_area.docks.items() if "head" in n.lower() and "map" in n.lower())
    assert head_map.width() >= 0.5 * win.width(), f"head map {head_map.width()} of {win.width()} px"
    assert head_map.height() >= 0.6 * win.height(), f"head map {head_map.height()} of {win.height()} px"


def test_1920x1080_keeps_the_full_input_panel(make_window, qtbot):
    win = _window(make_window, qtbot, 1920, 1080)
    assert win.input_panel.strip.isVisible() and win.input_panel.edit.height() > 2 * \
        QFontMetrics(win.input_panel.edit.font()).lineSpacing()
