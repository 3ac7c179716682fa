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


def to_scene(vb, x: float, y: float) -> QPointF:
    """Data (x, y) in scene pixels from the plot's box and range as laid out (the data group's transform is brought
    up to date only when it is painted)."""
    box = vb.sceneBoundingRect()
    (x0, x1), (y0, y1) = vb.viewRange()
    return QPointF(box.left() + (x - x0) / (x1 - x0) * box.width(), box.bottom() - (y - y0) / (y1 - y0) * box.height())


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


def draw_measuring(view, width: int, height: int, scale: float, measure):
    """Draw the figure on a ``width``×``height`` page at ``scale``; ``measure()`` runs once, while it is laid out for
    the page (not again when it is laid out for the screen afterwards). (The page image, what it returned.)"""
    img = QImage(width, height, QImage.Format.Format_RGB32)  # held: the painter draws into it
    got, orig = [], view._relayout

    def record(geom):
        orig(geom)
        if not got:
            got.append(measure())

    view._relayout = record
    painter = QPainter(img)
    try:
        view.render_figure(painter, QRectF(0, 0, width, height), scale)
    finally:
        painter.end()
        view._relayout = orig
    return img, got[0]


def widths(view, width: int, height: int, scale: float) -> list[tuple[int, int]]:
    """(legend marker, point) widths in page pixels for every point of heads 0-2 (head 3's point in layer 1 has
    the selection ring), drawn on a ``width``×``height`` page at ``scale``."""
    from attnviz.gui.style import head_colour

    def where():  # the legend's markers and the points
        return ([sample.mapRectToScene(sample.boundingRect()).center() for sample, _ in view.legend.items],
                [(int(h), to_scene(view.plot.vb, x, y)) for x, y, _layer, h in view.points() if h < 3])

    img, (legend, points) = draw_measuring(view, width, height, scale, where)
    rgb = _pixels(img)
    out = []
    for h, at in points:
        colour = QColor(head_colour(h))
        out.append((run_width(rgb, legend[h] * scale, colour), run_width(rgb, at * scale, colour)))
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


def layer_gaps(view, width: int = 1920, height: int = 1080, scale: float = 1.8) -> list[float]:
    """Page pixels between the right edge of each layer's rightmost point and the left edge of the next layer's
    leftmost point, laid out for a ``width``×``height`` slide (negative: the layers' points run into each other)."""
    def gaps():
        size = float(view.scatter.data["size"][0])  # page pixels while exporting
        # page pixels a layer: from the plot's box and x range as laid out (its child transform follows at paint)
        lo, hi = view.plot.vb.viewRange()[0]
        per_layer = view.plot.vb.width() / (hi - lo) * scale
        xs = {}
        for x, _y, layer, _h in view.points():
            xs.setdefault(int(layer), []).append(x * per_layer)
        return [min(xs[i + 1]) - max(xs[i]) - size for i in range(len(xs) - 1)]

    return draw_measuring(view, width, height, scale, gaps)[1]


def test_thirty_layers_of_nine_heads_keep_their_layers_apart(view):
    """A 30 × 9 model (SmolLM's grid) in a narrow dock (560 px): the points, now as large as the legend's markers,
    are held to a share of a layer's slot, so each layer's points stay apart from the next layer's (a guard for the
    larger points: at full size they ran together)."""
    from attnviz.gui.views.model_summary import HeadStats

    rng = np.random.default_rng(0)
    view.set_stats(HeadStats(np.ones((30, 9)), 2.2 + 0.1 * rng.standard_normal((30, 9)), "tokens"))
    for page in [(1920, 1080, 1.8), (560, 400, 1.0)]:
        gaps = layer_gaps(view, *page)
        assert len(gaps) == 29 and min(gaps) > 1, (page, min(gaps))
    # control: the same points drawn at full size are reported as running together in the dock
    import attnviz.gui.views.attention_distance_view as adv

    crowded = adv.CROWDED
    adv.CROWDED = 10.0
    try:
        assert min(layer_gaps(view, 560, 400, 1.0)) < 0, "full-size points over 30 layers did not touch"
    finally:
        adv.CROWDED = crowded
