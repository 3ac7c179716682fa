"""A model switch started while an input runs (issue 36): the covers over the previous input's figures said
"running the new input…" while that run was being dropped and the next model loaded, and again over the emptied
views while the new model ran its first input, though nothing of any previous input was under them. They say
what is really happening: the new model loading, then nothing yet while it runs its first input (the head map too,
whose "no input yet" was not true either). Control: a
plain long run of the same model keeps "running the new input…" over the figures it puts away."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from test_running_covers import _covers_up, _window  # noqa: E402

pytestmark = pytest.mark.slow


def _gated_runs(monkeypatch):
    """Every run waits for the gate current when it starts; returns the list holding that gate."""
    from attnviz.gui.window import runs

    gate, real = [threading.Event()], runs.run_input_job

    def slow(*args, **kwargs):
        gate[0].wait(60)
        return real(*args, **kwargs)
    monkeypatch.setattr(runs, "run_input_job", slow)
    return gate


def test_a_switch_during_a_run_says_loading_then_nothing_yet(make_window, qtbot, monkeypatch):
    from attnviz.gui.window.running_covers import FIGURE

    win = _window(make_window, qtbot)
    gate = _gated_runs(monkeypatch)
    win.input_panel.set_text("the bird sang", submit=True)
    qtbot.waitUntil(lambda: "ModelView" in _covers_up(win), timeout=30_000)
    assert _covers_up(win)["ModelView"] == FIGURE  # control: a run of the same model, over its previous figures
    assert "HeadMapView" not in _covers_up(win)  # (which the head map marks itself)
    win.load_model("tiny-encoder")
    up = _covers_up(win)
    assert up and all("loading tiny-encoder" in text and "running" not in text for text in up.values()), up
    first, gate[0] = gate[0], threading.Event()  # the new model's first run waits in its turn
    first.set()  # the dropped run ends (one lane: the load waits for it), then the load
    qtbot.waitUntil(lambda: win.loaded is not None and win.loaded.config.kind == "encoder", timeout=60_000)
    qtbot.waitUntil(lambda: "ModelView" in _covers_up(win), timeout=30_000)
    up = _covers_up(win)
    assert win.trace is None  # the previous model's figures are gone: nothing of an input is under the covers
    assert all("running" not in text or "first input" in text for text in up.values()), up
    assert all("previous input" not in text for text in up.values()), up
    assert "first input" in up["HeadMapView"]  # not its "no input yet": the input is there, running
    gate[0].set()
    qtbot.waitUntil(lambda: win.trace is not None and _covers_up(win) == {}, timeout=60_000)
