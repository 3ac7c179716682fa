"""While a new input's forward runs (a long input's takes minutes), nothing shows the previous input unmarked: after a
moment the Prediction panel, the token strip and every per-input view (All heads, token lines, rollout, …, the
hidden tabs too, and a view built during the run) are covered, saying why; the head map is not (it marks its own
map and previews the new input's layer), nor are the data-set views (a data set's figures, not the input's). All
are uncovered when the trace comes, or when the run is refused. Control: a run whose trace comes at once never
covers anything."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

pytestmark = pytest.mark.slow


def _covers_up(win) -> dict[str, str]:
    """Name of each covered widget -> the text over it (visible covers only; a hidden tab's counts as up)."""
    from attnviz.gui.window.loading_cover import LoadingCover

    out = {}
    targets = {"prediction": win.prediction_panel, "strip": win.input_panel.strip,
               **{type(v).__name__: v for v in win.views_area.views}}
    for name, target in targets.items():
        for cover in target.findChildren(LoadingCover):
            if cover.parent() is target and not cover.isHidden():
                out[name] = cover.text()
    return out


def _slow_runs(monkeypatch):
    from attnviz.gui.window import runs

    release, real = threading.Event(), runs.run_input_job

    def slow(*args, **kwargs):
        release.wait(60)  # a long forward: the trace comes when the test says
        return real(*args, **kwargs)
    monkeypatch.setattr(runs, "run_input_job", slow)
    return release


def _window(make_window, qtbot):
    """(A helper, not a fixture: a fixture's window outlived the teardown's check for leaked widgets.)"""
    win = make_window(model="tiny-decoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed, timeout=90_000)
    for name in ("ModelView", "TokenLinesView", "RolloutView"):
        win.views_area.build(name)
    return win


def test_a_long_run_covers_everything_of_the_previous_input(make_window, qtbot, monkeypatch):
    from attnviz.gui.window.running_covers import FIGURE, NOT_OF_THE_INPUT, PREDICTION, STRIP

    win = _window(make_window, qtbot)
    seen = []  # the covers up when each trace is shown
    win.trace_shown.connect(lambda _t: seen.append(_covers_up(win)))
    with qtbot.waitSignal(win.trace_shown, timeout=90_000):  # control: a quick run covers nothing
        win.input_panel.set_text("a dog ran", submit=True)
    assert seen == [{}] and _covers_up(win) == {}
    release = _slow_runs(monkeypatch)
    before = win.trace
    win.input_panel.set_text("the bird sang", submit=True)
    qtbot.waitUntil(lambda: "prediction" in _covers_up(win), timeout=30_000)
    up = _covers_up(win)
    per_input = [type(v).__name__ for v in win.views_area.views
                 if type(v).__name__ not in NOT_OF_THE_INPUT | {"CompareView"}]
    assert {"ModelView", "TokenLinesView", "RolloutView"} <= set(per_input)
    assert up == {"prediction": PREDICTION, "strip": STRIP, **{n: FIGURE for n in per_input}}
    assert "HeadMapView" not in up  # it marks its own map
    all_heads = win.views_area.docks["ModelView"].widget()
    cover = next(c for c in all_heads.children() if getattr(c, "target", None) is all_heads)
    assert cover.geometry() == all_heads.rect()  # the whole figure, not a corner of it
    late = next((n for n in win.views_area.unbuilt() if n not in NOT_OF_THE_INPUT | {"CompareView"}), None)
    if late is not None:  # a view built during the run gets the previous trace: covered as it is built
        win.views_area.build(late)
        assert _covers_up(win).get(late) == FIGURE
    win.views_area.build("CompareView")  # nothing pinned: it draws no input, so it is not said to be put away
    assert "CompareView" not in _covers_up(win)
    # a hidden tab shown during the run makes its widgets for the previous trace then (token lines' head boxes):
    # the cover stays on top of them, at the controls row and in the middle
    lines = win.views_area.docks["TokenLinesView"]
    lines.raise_()
    for _ in range(5):
        QApplication.processEvents()
    view = lines.widget()
    for point in (QPoint(8, 8), view.rect().center()):
        assert getattr(view.childAt(point), "target", None) is view, point
    release.set()
    qtbot.waitUntil(lambda: win.trace is not None and win.trace is not before, timeout=90_000)
    assert seen[-1] == {} and _covers_up(win) == {}


def test_a_refused_run_takes_the_covers_away(make_window, qtbot, monkeypatch):
    from attnviz.errors import InputError
    from attnviz.gui.window import runs

    win = _window(make_window, qtbot)
    release = _slow_runs(monkeypatch)
    real = runs.run_input_job

    def refused(*args, **kwargs):
        real(*args, **kwargs)
        raise InputError("an input this model cannot read")  # a refusal, as a too-long input's
    monkeypatch.setattr(runs, "run_input_job", refused)
    win.input_panel.set_text("the bird sang", submit=True)
    qtbot.waitUntil(lambda: "ModelView" in _covers_up(win), timeout=30_000)
    release.set()
    qtbot.waitUntil(lambda: _covers_up(win) == {}, timeout=60_000)


def test_a_load_that_supersedes_the_run_takes_the_covers_away(make_window, qtbot, monkeypatch):
    """A model load drops the running trace (its result never comes): a load that fails left "running the new
    input…" over the previous input's figures for good."""
    win = _window(make_window, qtbot)
    release = _slow_runs(monkeypatch)
    win.input_panel.set_text("the bird sang", submit=True)
    qtbot.waitUntil(lambda: "ModelView" in _covers_up(win), timeout=30_000)
    win.load_model("no-such-model")
    release.set()  # the forward ends (one lane: the load waits for it); its trace is dropped, never shown
    qtbot.waitUntil(lambda: "cannot load" in win.notice.text, timeout=60_000)
    assert _covers_up(win) == {}
