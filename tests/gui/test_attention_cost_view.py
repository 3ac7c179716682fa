"""The T² slide's view (issue 34 Deliver 6) on an injected measurement: the drawn points are the measured
ones, the title names the model and the exponents of those points, a restyle (theme, presentation) draws
again. Nothing is timed."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.runtime import attention_cost

T = [256, 512, 1024, 2048]


def _cost(eager, tiled):
    return attention_cost.AttentionCost(list(T), 4, 16, {"eager": [9.0, 30.0, 90.0, 900.0], "tiled": [1.0, 2.0, 4.0, 8.0]},
                                        {"eager": list(map(float, eager)), "tiled": list(map(float, tiled))},
                                        "a test machine")


@pytest.fixture
def view(qtbot, monkeypatch):
    from attnviz.gui.views.attention_cost_view import AttentionCostView
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    t = np.array(T, float)
    monkeypatch.setattr(attention_cost, "measure_attention_cost", lambda *a, **k: _cost(40 * t ** 2, 3000 * t))
    monkeypatch.setattr(attention_cost, "_SHARED", {"key": None, "cost": None})
    v = AttentionCostView(Selection())
    qtbot.addWidget(v)
    v.resize(1067, 600)
    trace = run_trace(load_model("charlm", device="cpu"), text="a b c")
    v.set_trace(trace)
    return v


def _drawn(plot):
    """(x, y) of each curve as given to the plot (``getData`` is after the log axes' log10)."""
    return [(np.asarray(item.xData, float), np.asarray(item.yData, float)) for item in plot.listDataItems()]


def test_the_view_draws_the_measured_points_and_names_them(view):
    assert view.cost is None and "press Measure" in view.title_item.text
    view.ensure_current()  # as an export and a lesson scene do
    curves = _drawn(view.plots["bytes"])
    assert len(curves) == 2
    eager = np.array(T, float) ** 2 * 40 / 1e6
    assert any(np.allclose(x, T) and np.allclose(y, eager) for x, y in curves)
    assert any(np.allclose(y, np.array(T) * 3000 / 1e6) for _, y in curves)
    assert any(np.allclose(y, [9, 30, 90, 900]) for _, y in _drawn(view.plots["ms"]))
    title = view.title_item.text
    # the exponent as a lecturer writes it, the measured number kept (was "to the power 2.00 (eager) vs 1.00")
    assert "eager grows with T to the power 2.00 (≈ T²), tiled to the power 1.00 (≈ T)" in title
    assert "^" not in title and "4 heads × 16" in title
    assert "charlm" in title and "a test machine" in view.notes.text


def test_a_restyle_draws_again_in_the_new_style(view):
    """set_style raised NotImplementedError (the view had no _style_changed): the app's theme switch and
    presentation mode could not restyle it."""
    from attnviz.gui.style import ViewStyle

    view.ensure_current()
    view.set_style(ViewStyle(font_scale=1.7, line_width=2.5, foreground="#ffffff", background="#000000"))
    assert len(view.plots["bytes"].listDataItems()) == 2  # still drawn
    label = view.legends["bytes"].items[0][1]
    assert label.opts["color"] in ("#ffffff", "#fff") or "255, 255, 255" in str(label.opts["color"])
    assert view.plots["bytes"].getAxis("left").labelStyle.get("color") == "#ffffff"


def test_the_lesson_menu_opens_the_cost_slide_itself(make_window, qtbot, monkeypatch):
    """A lecturer finds the T² slide from the Lesson menu: it starts the attention lesson on that slide, not on
    scene 1 sixteen Page Downs away (control: Start lesson opens on the first scene)."""
    from pathlib import Path

    from PySide6.QtCore import Qt

    from attnviz.gui.window.scene_actions import start_lesson

    t = np.array(T, float)
    monkeypatch.setattr(attention_cost, "measure_attention_cost", lambda *a, **k: _cost(40 * t ** 2, 3000 * t))
    monkeypatch.setattr(attention_cost, "_SHARED", {"key": None, "cost": None})
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None, timeout=90_000)
    bundled = Path(__file__).resolve().parents[2] / "assets"
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(bundled))  # the lesson's models are the bundled ones
    win.actions_["attention_cost"].trigger()
    stage = win.state.lesson.stage
    qtbot.waitUntil(lambda: stage.view is not None, timeout=120_000)
    assert stage.scene.view == "attention-cost" and type(stage.view).__name__ == "AttentionCostView"
    assert stage.index > 0
    with qtbot.waitSignal(stage.closed, timeout=30_000):
        qtbot.keyClick(win, Qt.Key.Key_Escape)
    first = start_lesson(win, "attention")  # Lesson ▸ Start lesson “attention”
    assert first.index == 0 and first.scene.view != "attention-cost"
    with qtbot.waitSignal(first.closed, timeout=30_000):
        qtbot.keyClick(win, Qt.Key.Key_Escape)
