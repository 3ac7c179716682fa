"""Issue 36: at 1280×720 the Training form stays folded during a run, and its progress bar and status line were
folded away with it: a lecturer saw the curves move with no step count and no message. Folded, a run shows
them above the curves; unfolded they are back in the form (the same two widgets). Controls: a tall window keeps
them in the form; before any run, the folded tab shows no empty bar."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.panels.training_panel import TrainingPanel  # noqa: E402


def _panel(qtbot, height: int) -> TrainingPanel:
    panel = TrainingPanel(["coref"])
    qtbot.addWidget(panel)
    panel.resize(970, height)
    panel.show()
    qtbot.waitExposed(panel)
    QApplication.processEvents()
    return panel


def _seen(widget) -> bool:
    return widget is not None and widget.isVisibleTo(widget.window()) and widget.height() > 0 and widget.width() > 0


def _run_line(panel):
    return getattr(panel, "run_line", None)  # (none before the fix: the test fails on what it checks)


def _running(panel, qtbot, tmp_path) -> None:
    """What start() does to the form before the worker's first event (no worker: nothing is trained)."""
    panel.out_dir = tmp_path / "run"
    panel.progress.setRange(0, 800)
    panel.progress.setValue(120)
    panel.status.setText("step 120/800 · loss 2.1")
    panel._set_running(True)
    qtbot.wait(20)


def test_a_run_in_a_folded_form_shows_its_progress_and_status(qtbot, tmp_path):
    panel = _panel(qtbot, 620)  # a 1280×720 window: the form folds away
    assert panel.compact and not _seen(panel.form_box)
    assert not _seen(panel.progress) and not _seen(_run_line(panel))  # control: no empty bar before a run
    _running(panel, qtbot, tmp_path)
    assert not _seen(panel.form_box)  # the replay keeps its width
    assert _seen(panel.progress) and _seen(panel.status), (panel.progress.geometry(), panel.status.geometry())
    assert panel.progress.value() == 120 and "step 120/800" in panel.status.shown_text()
    panel.form_toggle.setChecked(True)  # unfolded: back at the form's foot
    qtbot.wait(20)
    assert panel.progress.parentWidget() is panel.form_box and _seen(panel.progress)
    assert not _seen(_run_line(panel))
    panel._set_running(False)
    panel.form_toggle.setChecked(False)  # folded after the run: its outcome stays in view
    qtbot.wait(20)
    assert _seen(panel.status) and panel.status.parentWidget() is not panel.form_box


def test_a_tall_window_keeps_progress_in_the_form(qtbot, tmp_path):  # control
    panel = _panel(qtbot, 900)
    assert not panel.compact
    _running(panel, qtbot, tmp_path)
    assert panel.progress.parentWidget() is panel.form_box and _seen(panel.progress)
    assert not _seen(_run_line(panel))
    # the buttons right above the progress bar: their row once took a share of the form's spare height
    bottom = panel.cancel_button.mapTo(panel.form_box, panel.cancel_button.rect().bottomLeft()).y()
    assert panel.progress.geometry().top() - bottom <= 12, (bottom, panel.progress.geometry())


def _reachable(button) -> bool:
    """On screen and clickable: shown, enabled and not clipped away by its parents."""
    return _seen(button) and button.isEnabled() and not button.visibleRegion().isEmpty()


def test_a_folded_form_keeps_cancel_and_open_within_reach(qtbot, tmp_path):
    """Issue 36: folded at 1280×720, a run's Cancel and, after it, "Open trained model" were folded away with the
    form: a lecturer had to unfold the settings (squeezing the replay) to stop a run or open its model. Control:
    unfolded, the same buttons are the form's, once each."""
    panel = _panel(qtbot, 620)
    _running(panel, qtbot, tmp_path)
    assert not _seen(panel.form_box)
    assert _reachable(panel.cancel_button), panel.cancel_button.visibleRegion().boundingRect()
    assert not _seen(panel.start_button)  # Start goes with its settings, on the form's button
    panel._set_running(False)
    panel.open_button.setEnabled(True)  # what the end of a run with a saved model does
    qtbot.wait(20)
    assert _reachable(panel.open_button) and not _seen(panel.form_box)
    panel.form_toggle.setChecked(True)  # control: unfolded, the buttons are at the form's foot, Start with them
    qtbot.wait(20)
    assert all(_seen(b) and panel.form_box.isAncestorOf(b)
               for b in (panel.start_button, panel.cancel_button, panel.open_button))
    assert not _seen(_run_line(panel))
    panel.set_controls_visible(False)  # presenting: the curves and the replay, no buttons
    qtbot.wait(20)
    assert not _seen(panel.open_button) and not _seen(panel.cancel_button)
