"""A window on a tiny Hugging Face model with its head map built (the preview tests' starting point)."""

from __future__ import annotations

from tests.hf.factories import TEXT


def ready_head_map(make_window, qtbot, folder):
    """(window, its HeadMapView) once the first trace is shown and the views are built."""
    win = make_window(start=False, model=str(folder), text=TEXT)
    with qtbot.waitSignal(win.trace_shown, timeout=90000):
        win.start()
    qtbot.waitUntil(lambda: bool(win.views_area.views), timeout=30000)
    return win, win.views_area.docks["HeadMapView"].widget()
