"""Issue 36: the Training tab presented (F5) kept its replay's controls (probe, layer, head, colours, the step
slider and its label) at the desk's ~12 px under 25 px axis labels. Presented, at 1920×1080 and 1280×720, every
one is at least 16 px and the slider's handle as tall; docked they follow the application font again (the
control: docked, the audit does flag them at 16 px, so it measures what it claims)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFontInfo  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from attnviz.gui.panels.appearance import compose_style  # noqa: E402
from attnviz.gui.panels.presentation_titles import enlarge_group_titles, restore_group_titles  # noqa: E402
from attnviz.gui.panels.training_panel import TrainingPanel  # noqa: E402
from layout_audit_controls import control_text_problems  # noqa: E402

MIN_PRESENTED = 16


def _controls(panel):
    """The replay's controls and a run's progress bar and status line (shown over the curves while presenting)."""
    tl = panel.timeline
    return [w for w in tl.findChildren(QWidget) if not (w is tl.view or tl.view.isAncestorOf(w))] + \
        [panel.progress, panel.status]


@pytest.mark.parametrize("lines", [1080, 720])
def test_presented_replay_controls_are_legible_and_docked_ones_come_back(qtbot, lines):
    panel = TrainingPanel(["coref"])
    qtbot.addWidget(panel)
    panel.resize(1900 if lines == 1080 else 1270, lines - 20)
    panel.show()
    qtbot.waitExposed(panel)
    docked_px = QFontInfo(panel.timeline.step_label.font()).pixelSize()
    panel.status.setText("step 120/800 · loss 2.1")
    panel._set_running(True)  # a run under way (no worker: nothing is trained): its progress shows presented
    style = compose_style("light", True, "viridis", lines)
    panel.set_style(style)  # what F5 does: the presented style, the group titles' sheets, then the controls
    titles = enlarge_group_titles(panel, style)  # (their sheet froze the spin boxes' text at the desk size)
    panel.set_controls_visible(False)
    qtbot.wait(50)  # the rows laid out again for the larger type
    assert panel.progress.isVisible() and panel.status.isVisible()
    problems = control_text_problems(_controls(panel), MIN_PRESENTED, f"F5 at {lines} lines")
    assert not problems, "\n".join(problems)
    assert QFontInfo(panel.timeline.step_label.font()).pixelSize() > docked_px
    panel.set_controls_visible(True)  # Esc
    restore_group_titles(titles)
    panel.set_style(compose_style("light", False, "viridis", lines))
    QApplication.processEvents()
    assert QFontInfo(panel.timeline.step_label.font()).pixelSize() == docked_px
    assert panel.timeline.slider.styleSheet() == ""
    # control: the desk-sized controls are what the audit flags
    assert control_text_problems(_controls(panel), MIN_PRESENTED, "docked")
