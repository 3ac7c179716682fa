"""The attention-distance points on an exported slide (issue 36): pyqtgraph draws a scatter's symbols in the
page's pixels (it resets the painter's transform), while the legend is drawn in layout pixels scaled ×1.8 on a
1920×1080 slide, so the points were 9-px dots beside 16-px legend markers. Measured from the drawn pixels: each
point is as wide as the legend's marker of its colour, on a slide and docked."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

SENTENCE = "The animal didn't cross the street because it was too tired"


def _pixels(img: QImage) -> np.ndarray:
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width() * 4]
    return a.reshape(img.height(), img.width(), 4)[..., 2::-1].astype(int)  # BGRA in memory: RGB


def run_width(rgb: np.ndarray, at: QPointF, colour: QColor) -> int:
    """Pixels of ``colour`` in the row through ``at``, on both sides of it without a gap: the symbol's width."""
    y, x = int(round(at.y())), int(round(at.x()))
    want = np.array([colour.red(), colour.green(), colour.blue()])
    row = np.abs(rgb[y] - want).max(axis=1) < 40
    if not row[x]:
        return 0
    left, right = x, x
    while left > 0 and row[left - 1]:
        left -= 1
    while right < len(row) - 1 and row[right + 1]:
        right += 1
    return right - left + 1


@pytest.fixture
def view(qtbot):
    from attnviz.gui.views.attention_distance_view import AttentionDistanceView
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    v = AttentionDistanceView(Selection())
    qtbot.addWidget(v)
    v.resize(1067, 600)
    v.show()
    v.set_trace(run_trace(load_model("coref", device="cpu"), text=SENTENCE))
    qtbot.waitUntil(lambda: len(v.legend.items) == 4 and len(v.scatter.data) > 0, timeout=10000)
    return v


def widths(view, width: int, height: int, scale: float) -> list[tuple[int, int]]:
    """(legend marker, point) widths in page pixels for every point of heads 0-2 (head 3's point in layer 1 has
    the selection ring), drawn on a ``width``×``height`` page at ``scale``."""
    from attnviz.gui.style import head_colour

    img = QImage(width, height, QImage.Format.Format_RGB32)
    where, orig = {}, view._relayout

    def record(geom):  # where the legend's markers and the points are while the page is drawn
        orig(geom)
        where["legend"] = [s.mapRectToScene(s.boundingRect()).center() for s, _ in view.legend.items]
        where["points"] = [(int(h), view.scatter.mapToScene(QPointF(x, y)))
                           for x, y, _layer, h in view.points() if h < 3]

    view._relayout = record
    painter = QPainter(img)
    try:
        view.render_figure(painter, QRectF(0, 0, width, height), scale)
    finally:
        painter.end()
        view._relayout = orig
    rgb = _pixels(img)
    out = []
    for h, at in where["points"]:
        colour = QColor(head_colour(h))
        out.append((run_width(rgb, where["legend"][h] * scale, colour), run_width(rgb, at * scale, colour)))
    return out


@pytest.mark.parametrize("page", [(1920, 1080, 1.8), (1280, 720, 1.2), (1067, 600, 1.0)],
                         ids=["1920x1080-slide", "1280x720-slide", "docked-size"])
def test_points_are_as_large_as_the_legend_markers(view, page):
    found = widths(view, *page)
    assert len(found) == 6, found
    for legend, point in found:
        assert legend >= 6 * page[2], found  # the marker itself is found where the legend draws it
        assert point >= legend - 2, found  # 9 px points beside 16 px markers on the 1920 slide before the fix


def test_the_measurement_sees_small_points(view):
    """Negative control: points drawn at half the legend's size are reported smaller than the markers."""
    size = view._point_size
    view._point_size = lambda ring=1.0: size(ring) / 2
    view._draw()
    found = widths(view, 1920, 1080, 1.8)
    assert found and all(point < legend - 2 for legend, point in found), found
