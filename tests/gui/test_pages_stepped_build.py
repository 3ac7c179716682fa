"""The Training and Walkthrough pages are built in parts, one per event-loop turn (issue 18), yet look the
same as when built in one go, and are never on screen half-built: bringing a tab forward while its page is
being built finishes it at once."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget


def widget_tree(widget: QWidget, depth: int = 0, out: list | None = None) -> list[str]:
    """Every descendant widget in stacking order: its class and what it says (title, text)."""
    out = [] if out is None else out
    text = ""
    for attr in ("title", "text", "placeholderText"):
        value = getattr(widget, attr, None)
        if callable(value):
            try:
                value = value()
            except TypeError:
                continue
            if isinstance(value, str) and value:
                text = value
                break
    out.append("  " * depth + f"{type(widget).__name__} {text!r}")
    for child in widget.children():
        if isinstance(child, QWidget):
            widget_tree(child, depth + 1, out)
    return out


def _built_in_parts(widget) -> int:
    parts = 0
    while widget.build_step():
        assert not widget.built
        parts += 1
    assert widget.built and not widget.build_step()
    return parts


def test_training_panel_built_in_parts_is_the_panel_built_at_once(qtbot):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.panels.training_panel import TrainingPanel

    style = compose_style("light", False, "viridis")
    whole = TrainingPanel(["coref", "copy"], style=style)
    qtbot.addWidget(whole)
    stepped = TrainingPanel(["coref", "copy"], style=style, stepped=True)
    qtbot.addWidget(stepped)
    assert not stepped.built and not hasattr(stepped, "task_box")  # nothing built yet
    assert _built_in_parts(stepped) >= 4  # the form, each plot, the replay: apart
    assert whole.built
    assert widget_tree(stepped) == widget_tree(whole)
    # the form (left) and the curves above the replay (right), as before
    assert stepped.splitter.widget(0).widget() is stepped.form_box
    right = stepped.splitter.widget(1)
    assert right.widget(0).title() == "Training curves" and right.widget(1).title().startswith("How attention")
    assert stepped.plots.parent() is right.widget(0) and stepped.timeline.parent().parent() is right
    for panel in (stepped, whole):
        assert "training loss (cross-entropy, nats)" in panel.loss_title.text
        assert "batch accuracy" in panel.acc_title.text
        assert panel.acc_plot.getViewBox().linkedView(0) is panel.loss_plot.getViewBox()
    assert [stepped.task_box.itemText(i) for i in range(stepped.task_box.count())] == ["coref", "copy"]
    stepped.show_model_history({"step": [1, 2], "loss": [1.0, 0.5], "accuracy": [0.5, 1.0]}, "x")
    assert list(stepped.loss_curve.getData()[1]) == [1.0, 0.5]


def test_walkthrough_page_built_in_parts_is_the_page_built_at_once(qtbot):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.walkthrough import WalkthroughPage
    from attnviz.selection import Selection

    style = compose_style("light", False, "viridis")
    whole = WalkthroughPage(Selection(), style)
    qtbot.addWidget(whole)
    stepped = WalkthroughPage(Selection(), style, stepped=True)
    qtbot.addWidget(stepped)
    assert not stepped.built and stepped.count() == 0
    assert _built_in_parts(stepped) == 3  # four sub-tabs, one per part
    assert widget_tree(stepped) == widget_tree(whole)
    tabs = [(stepped.tabText(i), stepped.tabToolTip(i)) for i in range(stepped.count())]
    assert tabs == [(whole.tabText(i), whole.tabToolTip(i)) for i in range(whole.count())]
    assert [t for t, _ in tabs] == ["Six steps", "Matrix form", "Sandbox", "What if"]


def _switch_mid_build(win, qtbot, parts: str, page):
    """Bring ``page`` forward between two turns of the stepped build held in ``win.pages.<parts>``, as a click
    would; returns (built before the switch, built after it, the page holds it after it)."""
    seen = {}

    def poll():  # every event-loop turn; the build runs a part per turn
        building = getattr(win.pages, parts)
        if building is not None and not seen:
            seen["before"] = building.built
            win.tabs.setCurrentWidget(page)
            seen["after"] = (building.built, page.layout().itemAt(0).widget() is building)

    timer = QTimer(win)
    timer.timeout.connect(poll)
    timer.start(0)
    qtbot.waitUntil(lambda: bool(seen), timeout=120000)
    timer.stop()
    return (seen["before"], *seen["after"])


def test_training_tab_brought_forward_mid_build_is_complete_and_works(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    before, built, on_page = _switch_mid_build(win, qtbot, "_training_parts", win.training_page)
    assert not before and built and on_page  # the rest was built at once, and the page holds the finished panel
    panel = win.training
    assert panel is not None and panel.built and win.pages._training_parts is None
    qtbot.waitUntil(panel.isVisible, timeout=10000)  # a widget put in a shown layout is shown next turn
    assert panel.plots.isVisible() and panel.timeline.isVisible()
    assert "Preparing" not in " ".join(widget_tree(win.training_page))
    # the controls work: a task's defaults arrive, the device list is the window's
    panel.task_box.setCurrentText("coref")
    qtbot.waitUntil(lambda: panel._defaults.get("name") == "coref", timeout=60000)
    assert panel.steps_box.value() == panel._defaults["steps"] and panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: win.walkthrough is not None, timeout=60000)  # the rest of start-up goes on
    assert win.training is panel


def test_walkthrough_tab_brought_forward_mid_build_is_complete(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat")
    before, built, on_page = _switch_mid_build(win, qtbot, "_walkthrough_parts", win.walkthrough_page)
    assert not before and built and on_page
    page = win.walkthrough
    assert page is not None and page.count() == 4 and win.pages._walkthrough_parts is None
    qtbot.waitUntil(lambda: page.steps.isVisible(), timeout=10000)
    assert win.pages._walkthrough_fed[0] is win.loaded  # brought up to date as it was shown


def test_pages_are_never_on_screen_half_built(make_window, qtbot, monkeypatch):
    """Whatever tab is in front, a page being built stays off screen until its last part is built."""
    from attnviz.gui.panels.training_panel import TrainingPanel
    from attnviz.gui.walkthrough import WalkthroughPage

    seen = []
    for cls in (TrainingPanel, WalkthroughPage):
        original = cls.build_step

        def build_step(self, original=original):
            seen.append((type(self).__name__, self.isVisible()))
            return original(self)

        monkeypatch.setattr(cls, "build_step", build_step)
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    win.tabs.setCurrentWidget(win.training_page)  # in front from the start: built in one go when its turn comes
    win.start()
    qtbot.waitUntil(lambda: win.training is not None and win.walkthrough is not None, timeout=120000)
    assert {name for name, _ in seen} == {"TrainingPanel", "WalkthroughPage"}
    assert not any(visible for _, visible in seen)
    assert win.training.isVisible() and win.training.built


def test_a_models_replay_and_curves_in_two_steps_end_as_shown_at_once(qtbot):
    import numpy as np

    from attnviz.gui.panels.training_panel import TrainingPanel
    from attnviz.training.snapshots import Snapshots

    probs = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 3)).astype(np.float32)  # (H, Tq, Tk)
    snaps = Snapshots(steps=[0, 10], probes=[{"input": "a b c", "tokens": ["a", "b", "c"]}], parts=["self"],
                      arrays={f"s{k}.p0.L0": probs for k in range(2)})
    panel = TrainingPanel(["coref"])
    qtbot.addWidget(panel)
    steps = panel.model_snapshot_steps(snaps, False)
    next(steps)  # the replay first: it repaints alone
    assert panel.timeline.snapshots is snaps and panel.timeline.step == 10
    assert list(steps) == []  # then the recorded curves (none for a panel outside a window)
    np.testing.assert_array_equal(panel.timeline.view.trace["L0.probs"], probs)
    panel.steps = [1]  # a run of this tab is on screen: a model's replay no longer replaces it
    panel.timeline.set_snapshots(None)
    assert list(panel.model_snapshot_steps(snaps, False)) == [] and panel.timeline.snapshots is None


def test_a_model_without_snapshots_or_history_clears_the_previous_models(make_window, qtbot):
    """The Training tab shows the loaded model's replay and curves or none: never the previous model's."""
    import numpy as np

    from attnviz.training.snapshots import Snapshots

    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None and win.loaded is not None, timeout=120000)
    panel = win.training
    probs = np.full((2, 3, 3), 1 / 3, np.float32)
    earlier = Snapshots(steps=[0, 5], probes=[{"input": "a b c", "tokens": ["a", "b", "c"]}], parts=["self"],
                        arrays={f"s{k}.p0.L0": probs for k in range(2)})
    # what an earlier model with stored snapshots and a recorded history left on the tab
    panel.timeline.set_snapshots(earlier, False)
    panel.show_model_history({"step": [0, 5], "loss": [2.0, 1.0], "accuracy": [0.1, 0.9]}, "earlier")
    assert panel.timeline.snapshots is earlier and "earlier" in panel.status.text()
    with qtbot.waitSignal(win.model_loaded, timeout=120000):
        win.load_model("tiny-bpe")  # stored with neither
    qtbot.waitUntil(lambda: panel.timeline.snapshots is None, timeout=30000)
    win.tabs.setCurrentWidget(win.training_page)
    qtbot.waitUntil(lambda: "earlier" not in panel.status.text(), timeout=30000)
    x, _ = panel.loss_curve.getData()
    assert x is None or len(x) == 0
