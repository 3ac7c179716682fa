"""The √d_k training curves (lesson scene 8) on a presented page of a 1216×662 window and at 1280×720 and
1920×1080 (issue 36): the middle plots' numbers "1.0 0.8 0.6 0.4 0.2 0" were written over each other on ~80 px tall
plots, and the rotated "validation accuracy" titles ran into the next row's. Now every numbered tick of a vertical
axis is at least a line of its type from the next, and no title (plot, row, axis) touches another."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

# (page size of the scene's figure, screen lines the style is composed for): the lesson's page in a 1216×662
# window, full screen at 1280×720, and at 1920×1080
PAGES = [((1200, 564), 662), ((1264, 622), 720), ((1904, 900), 1080)]


@pytest.fixture(params=PAGES, ids=["1216x662", "1280x720", "1920x1080"])
def view(qtbot, request):
    from attnviz.bench.traces import sample_trace
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.views.scale_training_view import ScaleTrainingView

    (w, h), lines = request.param
    v = ScaleTrainingView(style=compose_style("light", True, "viridis", lines=lines))
    qtbot.addWidget(v)
    v.resize(w, h)
    v.show()
    qtbot.waitExposed(v)
    v.set_trace(sample_trace("encoder", T=6))
    for _ in range(6):
        QApplication.processEvents()
    assert v.summary is not None, v.error
    return v


def _numbered_ticks_px(axis) -> list[float]:
    """Pixel distances between the numbered ticks of a vertical axis as drawn now."""
    lo, hi = axis.range
    size = axis.linkedView().height() if axis.linkedView() is not None else axis.height()
    levels = axis.tickValues(lo, hi, size)
    values = sorted(levels[0][1])  # pyqtgraph numbers the first (major) level always
    return [(b - a) * size / (hi - lo) for a, b in zip(values, values[1:])]


def test_vertical_axes_number_their_ticks_a_line_apart(view):
    line = QFontMetricsF(view.style.font()).height()
    for (init, key), plot in view.plots.items():
        gaps = _numbered_ticks_px(plot.getAxis("left"))
        assert gaps, (init, key)
        assert min(gaps) >= line, (init, key, gaps, line)


def _text_boxes(view) -> list[tuple[str, object]]:
    boxes = [(f"row {k}", t.item.sceneBoundingRect()) for k, t in getattr(view, "row_titles", {}).items()]
    for (init, key), plot in view.plots.items():
        if plot.titleLabel.isVisible() and plot.titleLabel.text:
            boxes.append((f"{init}/{key} title", plot.titleLabel.item.sceneBoundingRect()))
        for name in ("left", "bottom"):
            label = plot.getAxis(name).label
            if plot.getAxis(name).showLabel and label.isVisible() and label.toPlainText().strip():
                boxes.append((f"{init}/{key} {name} axis title", label.sceneBoundingRect()))
    return boxes


def test_no_title_runs_into_another(view):
    boxes = _text_boxes(view)
    assert len(boxes) >= 5, boxes  # the row (or axis) titles and the column titles at least
    for i, (a, ra) in enumerate(boxes):
        for b, rb in boxes[i + 1:]:
            both = ra.intersected(rb)
            assert both.width() <= 1 or both.height() <= 1, (a, ra, b, rb)


def test_pyqtgraphs_own_spacing_would_pile_the_numbers_up(view):
    """Control: on the smallest page pyqtgraph's spacing (by the axis' length alone) numbers the accuracy axis'
    ticks less than a line apart, which the first test would catch."""
    import pyqtgraph as pg

    if view.width() > 1200:
        pytest.skip("the 1216×662 page only")
    axis = view.plots["unit", "accuracy"].getAxis("left")
    lo, hi = axis.range
    size = axis.linkedView().height()
    spacing = pg.AxisItem.tickSpacing(axis, lo, hi, size)[0][0]
    assert spacing * size / (hi - lo) < QFontMetricsF(view.style.font()).height()
