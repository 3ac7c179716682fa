"""The Training tab's status line keeps its two lines whole: a cancelled run's message with its folder path
wrapped to three lines in the fixed two-line label, cut at the top and bottom (seen at 1920×1080)."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt

from attnviz.gui.panels.training_panel import TrainingPanel

CANCELLED = ("cancelled at step 440 of 800; checkpoint of step 400 kept in "
             "/root/.local/share/attnviz/attnviz/runs/induction-20261129-034441")


def _wrapped_height(label, text: str) -> int:
    fm = label.fontMetrics()
    return fm.boundingRect(QRect(0, 0, label.contentsRect().width(), 1 << 20), Qt.TextFlag.TextWordWrap, text).height()


def _panel(qtbot, width: int) -> TrainingPanel:
    panel = TrainingPanel(["coref"])
    qtbot.addWidget(panel)
    panel.resize(width, 700)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_long_status_is_shortened_to_its_two_lines_and_whole_in_text_and_tooltip(qtbot):
    panel = _panel(qtbot, 1100)
    status = panel.status
    status.setText(CANCELLED)
    shown = getattr(status, "shown_text", status.text)()  # what the label draws
    assert _wrapped_height(status, shown) <= status.contentsRect().height()
    assert shown.startswith("cancelled at step 440 of 800") and shown.endswith("034441")  # both ends kept
    assert status.text() == CANCELLED and status.toolTip() == CANCELLED


def test_a_short_status_is_drawn_whole_without_a_tooltip(qtbot):  # the negative control
    panel = _panel(qtbot, 1100)
    panel.status.setText("cancelling after the current step…")
    assert panel.status.shown_text() == "cancelling after the current step…"
    assert panel.status.toolTip() == ""


def test_a_wider_label_draws_more_of_the_same_status(qtbot):
    from attnviz.gui.widgets.fitted_label import fit_text

    fm = _panel(qtbot, 1100).status.fontMetrics()
    narrow, wide = fit_text(CANCELLED, fm, 200, 2), fit_text(CANCELLED, fm, 320, 2)
    assert len(narrow) < len(wide) < len(CANCELLED)
    assert fit_text(CANCELLED, fm, 5000, 2) == CANCELLED
