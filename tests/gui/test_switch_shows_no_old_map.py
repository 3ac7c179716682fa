"""A model switch never leaves the previous model's map on screen (issue 36, finding 10: the old model's map was
still shown ~0.3 s after a switch). From the moment the new model is loaded until its own trace arrives, the
head map shows nothing or a loading state, never the old model's attention."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytestmark = pytest.mark.slow


def test_no_frame_of_the_old_models_map_after_the_switch(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    head_map = next(v for v in win.views_area.views if type(v).__name__ == "HeadMapView")
    old = win.trace
    assert head_map.trace is old  # (control: the map shows the first model's trace before the switch)
    seen = []
    head_map_paint = head_map.canvas.viewport()

    def watch():
        # every event-loop turn after the new model is in: what the head map holds
        if win.loaded is not None and win.loaded.name == "tiny-decoder":
            seen.append(head_map.trace is old)

    from PySide6.QtCore import QTimer

    timer = QTimer(head_map_paint)
    timer.timeout.connect(watch)
    timer.start(0)
    win.load_model("tiny-decoder")
    qtbot.waitUntil(lambda: win.trace is not None and win.trace is not old and head_map.trace is win.trace,
                    timeout=90_000)
    timer.stop()
    assert seen, "the test never saw the new model loaded before its trace"
    assert not any(seen), f"the old model's map was still held in {sum(seen)} of {len(seen)} turns"
