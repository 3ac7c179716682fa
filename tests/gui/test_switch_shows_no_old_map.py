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



def test_the_old_figures_are_covered_when_the_switch_starts_and_back_if_it_fails(make_window, qtbot, tmp_path):
    """The previous model's figures are covered the moment another model is asked for (a real-size model loads
    for seconds: its predecessor's maps stood unmarked meanwhile), the cover saying what is loading; a load that
    fails uncovers them as they were (the same trace: nothing run again). Control: a reload of the same model
    (a device change) covers nothing."""
    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    covers = win.loading_covers
    assert not any(c.isVisible() for c in covers)
    old = win.trace
    win.load_model("tiny-encoder")  # the same model again
    assert not any(c.isVisible() for c in covers)
    qtbot.waitUntil(lambda: win.trace is not None and win.trace is not old, timeout=90_000)
    win.load_model("tiny-decoder")
    assert all(c.isVisible() for c in covers)  # at once, before the load has run
    pages = win.tabs.currentWidget()
    assert "loading tiny-decoder" in covers[0].text()
    top_left = covers[0].mapTo(win.tabs, covers[0].rect().topLeft())
    assert covers[0].width() >= pages.width() and covers[0].height() >= pages.height()
    assert top_left.y() >= win.tabs.tabBar().geometry().bottom()  # the tab row stays usable
    qtbot.waitUntil(lambda: win.trace is not None and win.loaded.name == "tiny-decoder", timeout=90_000)
    assert not any(c.isVisible() for c in covers)
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    (bad / "config.json").write_text("{")
    shown = win.trace
    win.load_model(str(bad))
    assert all(c.isVisible() for c in covers)
    qtbot.waitUntil(lambda: win.notice.level == "error", timeout=90_000)
    assert not any(c.isVisible() for c in covers)
    assert win.loaded.name == "tiny-decoder" and win.trace is shown


def test_a_long_run_puts_the_previous_prediction_away(make_window, qtbot, monkeypatch):
    """While a new input's forward runs (a long input's takes minutes), the Prediction panel showed the previous
    input's next-token list, its Step button ready to append to that input: after a moment it is covered, saying
    why, and uncovered when the new trace comes. Control: a run whose trace comes at once never covers it."""
    import threading

    from attnviz.gui.window import runs

    win = make_window(model="tiny-decoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: win.trace is not None, timeout=90_000)
    cover = win.running_cover
    shown = []
    win.trace_shown.connect(lambda _t: shown.append(cover.isVisible()))
    with qtbot.waitSignal(win.trace_shown, timeout=90_000):
        win.input_panel.set_text("a dog ran", submit=True)
    assert shown == [False] and not cover.isVisible()  # (the cover is never up when a trace is shown)
    release = threading.Event()
    real = runs.run_input_job

    def slow(*args, **kwargs):
        release.wait(60)  # a long forward: the trace comes when the test says
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "run_input_job", slow)
    before = win.trace
    win.input_panel.set_text("the bird sang", submit=True)
    qtbot.waitUntil(cover.isVisible, timeout=30_000)
    assert "running the new input" in cover.text()
    assert cover.geometry() == win.prediction_panel.rect()
    release.set()
    qtbot.waitUntil(lambda: win.trace is not None and win.trace is not before, timeout=90_000)
    assert not cover.isVisible()
