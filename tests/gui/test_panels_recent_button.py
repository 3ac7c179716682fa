"""The model panel's Recent button keeps room for its menu arrow: as a tool button the arrow was drawn over
the "t" of "Recent" (seen at both sizes)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from attnviz.gui.panels.model_panel import ModelPanel  # noqa: E402

from menu_arrow import clear_of_arrow  # noqa: E402


def test_the_recent_arrow_does_not_touch_its_text(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_recent(["/tmp/a-model"])
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.recent_button.menu() is not None and panel.recent_button.isEnabled()
    assert clear_of_arrow(panel.recent_button) >= 0


def test_the_measure_sees_an_overlap_on_a_tight_button(qtbot):  # the negative control
    panel = ModelPanel()
    qtbot.addWidget(panel)
    button = panel.recent_button
    button.setFixedWidth(button.fontMetrics().horizontalAdvance(button.text()) + 8)
    assert clear_of_arrow(button) < 0
