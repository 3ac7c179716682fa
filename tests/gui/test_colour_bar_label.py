"""The colour bar's label never overlaps its tick labels (issue 36: MPT's bar, made tall, then shortened,
wrapped its label onto more lines than its width had room for, and drew them over the ticks)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

LABEL = "attention weight · shared scale across the layer's heads"


def _shown_bar(qtbot, height):
    from attnviz.gui.widgets.colour_bar import ColourBarItem

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    bar = ColourBarItem(label=LABEL)
    widget.addItem(bar)
    bar.set_levels(0.0, 0.366)
    widget.resize(300, 600)
    widget.show()
    QApplication.processEvents()
    return widget, bar


def _overlap(bar) -> float:
    """Pixels by which the rotated label's left edge lies over the widest tick label's right edge."""
    fm = bar.style.metrics()
    ticks_right = bar._bar_rect().right() + 6 + max(fm.horizontalAdvance(t) for t in bar._texts())
    label_left = bar.boundingRect().width() - 2 - fm.height() * len(bar._label_lines())
    return ticks_right - label_left


def test_a_shortened_bar_makes_room_for_its_wrapped_label(qtbot):
    widget, bar = _shown_bar(qtbot, 600)
    tall = len(bar._label_lines())
    widget.resize(300, 140)  # the label now wraps onto more lines
    for _ in range(5):
        QApplication.processEvents()
    assert len(bar._label_lines()) > tall, "control: the short bar wraps its label onto more lines"
    assert _overlap(bar) <= 0, f"the label overlaps the tick labels by {_overlap(bar):.1f} px"
