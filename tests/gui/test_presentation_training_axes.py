"""The Training tab presented (F5, or beside a lesson) after a long run: the curves' axis titles ("step") are
written at the ticks' size (issue 36: pyqtgraph's own ~9 pt "step" read ~9 px under 13 px ticks at 1280×720,
a 250,000-step run's "100000 200000" ticks themselves stayed legible)."""

from __future__ import annotations

import math

import pytest
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from attnviz.tasks import task_names


@pytest.mark.parametrize("lines", [720, 1080])
def test_axis_titles_are_as_large_as_the_ticks_when_presenting(qtbot, lines):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.panels.training_panel import TrainingPanel

    panel = TrainingPanel(task_names())
    qtbot.addWidget(panel)
    panel.resize(1280 if lines == 720 else 1920, lines - 40)
    panel.show()
    steps = list(range(0, 250_001, 625))  # a long run
    panel.show_model_history({"step": steps, "loss": [3.5 * math.exp(-s / 5e4) for s in steps],
                              "accuracy": [1 - math.exp(-s / 4e4) for s in steps]})
    style = compose_style("light", True, "viridis", lines=lines)
    panel.set_style(style)
    for _ in range(4):
        QApplication.processEvents()
    tick_px = QFontMetricsF(style.font()).height()
    titled = [(plot, name) for plot in (panel.loss_plot, panel.acc_plot) for name in ("left", "bottom")
              if plot.getAxis(name).labelText]
    assert titled, "no axis title: the test shows nothing"
    for plot, name in titled:
        height = _line_px(plot.getAxis(name).label)
        assert height >= 0.95 * tick_px, (name, height, tick_px)
    # control: the text item pyqtgraph makes by default, in the same window, is smaller than the ticks
    from pyqtgraph import AxisItem

    plain = AxisItem("bottom")
    plain.setLabel("step")
    assert _line_px(plain.label) < 0.95 * tick_px, (_line_px(plain.label), tick_px)


def _line_px(text_item) -> float:
    """The height of an axis title's line of text (its item's box less the document's margins)."""
    return text_item.boundingRect().height() - 2 * text_item.document().documentMargin()
