"""A colour bar's tick labels never touch (issue 36: the lesson's causal-mask scene at 1280×720 drew "−10" one
line above the exact end "−12.1", the two read as one run of text). Measured from what the bar paints."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QApplication


def _painted_labels(bar) -> list[tuple[str, QRectF]]:
    """(text, ink box) of every tick label the bar draws, recorded while it paints."""
    seen = []
    original = QPainter.drawText

    def recorded(painter, *args):
        if len(args) == 3 and isinstance(args[0], QRectF) and isinstance(args[2], str):
            rect, text = args[0], args[2]
            ink = QFontMetricsF(painter.font()).tightBoundingRect(text)
            # vertically centred in its rect, as AlignVCenter draws it (ink box about the text's centre line)
            seen.append((text, QRectF(rect.left(), rect.center().y() - ink.height() / 2, ink.width(), ink.height())))
        return original(painter, *args)

    size = bar.boundingRect().size().toSize()
    image = QImage(size.width(), size.height(), QImage.Format_ARGB32)
    painter = QPainter(image)
    QPainter.drawText = recorded
    try:
        bar.paint(painter)
    finally:
        QPainter.drawText = original
        painter.end()
    right_of_bar = bar._bar_rect().right() + 6
    return [(t, r) for t, r in seen if abs(r.left() - right_of_bar) < 0.5 and t != "masked"]


@pytest.mark.parametrize("font_scale", [1.0, 1.5])
@pytest.mark.parametrize("height", [250, 360, 420])
def test_tick_labels_keep_clear_of_each_other(qtbot, height, font_scale):
    from attnviz.gui.style import ViewStyle
    from attnviz.gui.widgets.colour_bar import ColourBarItem, nice_ticks

    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    bar = ColourBarItem(style=ViewStyle(font_scale=font_scale), label="score")
    bar.show_masked = True
    widget.addItem(bar)
    bar.set_levels(-12.1, 15.9)  # the causal-mask scene's scores: −10 lies near the exact end −12.1
    widget.resize(160, height)
    widget.show()
    for _ in range(3):
        QApplication.processEvents()
    labels = _painted_labels(bar)
    texts = [t for t, _ in labels]
    assert "\u221212.1" in texts and "15.9" in texts, f"control: the exact ends are always drawn ({texts})"
    assert len(labels) >= 3, f"control: in-between ticks are drawn too ({texts}, of {nice_ticks(-12.1, 15.9)})"
    boxes = sorted((r for _, r in labels), key=lambda r: r.top())
    for a, b in zip(boxes, boxes[1:]):
        # most of a blank line between two labels: at a line's spacing (gap ≈ 0.6 × the digits' height) two
        # ticks read as one two-line label
        gap = 0.8 * max(a.height(), b.height())
        assert b.top() - a.bottom() >= gap, (
            f"tick labels {texts} at {height} px: two are {b.top() - a.bottom():.1f} px apart (want ≥ {gap:.1f})")


def test_negative_levels_print_a_real_minus_sign():
    """The causal-mask scene's bar read "-10", "-12.1" (hyphens) beside slides that print "−2.98"."""
    from attnviz.gui.widgets.colour_bar import format_level

    assert format_level(-12.1) == "\u221212.1" and format_level(-1.2e-5) == "\u22121.2e\u221205"
    assert format_level(12.1) == "12.1" and format_level(0.0) == "0"  # control: no sign where there is none
