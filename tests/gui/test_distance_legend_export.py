"""The attention-distance legend on an exported slide (issue 36 finding 10): pyqtgraph's legend ignores
transformations, so an export (laid out at 1067×600, drawn ×1.8) drew its labels at ~9 px. Measured from the
drawn pixels: at least 12 px of ink for "head 0"."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem

from test_distance_points_slide import SENTENCE, view  # noqa: F401 - coref's view at 1067×600, laid out


def _ink_rows(img: QImage, rect: QRectF) -> int:
    """Rows of ``rect`` (image pixels) holding any dark pixel: the height of the text drawn there."""
    ptr = img.constBits()
    a = np.frombuffer(ptr, np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width() * 4]
    a = a.reshape(img.height(), img.width(), 4)[..., :3].min(axis=2)
    y0, y1 = max(0, int(rect.top())), min(img.height(), int(rect.bottom()) + 1)
    x0, x1 = max(0, int(rect.left())), min(img.width(), int(rect.right()) + 1)
    return int((a[y0:y1, x0:x1] < 100).any(axis=1).sum())


def test_the_legend_scales_with_the_exported_slide(view):  # noqa: F811 - the fixture
    assert not view.legend.flags() & QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
    img = QImage(1920, 1080, QImage.Format.Format_RGB32)
    scale, boxes, orig = 1.8, {}, view._relayout

    def record(geom):  # where the legend's first label is while the slide is drawn
        orig(geom)
        label = view.legend.items[0][1]
        boxes["legend"] = label.mapRectToScene(label.boundingRect())

    view._relayout = record
    painter = QPainter(img)
    try:
        view.render_figure(painter, QRectF(0, 0, 1920, 1080), scale)
    finally:
        painter.end()
        view._relayout = orig
    legend_px = _ink_rows(img, QRectF(*(v * scale for v in boxes["legend"].getRect())))
    assert legend_px >= 12, legend_px  # "head 0" at least 12 px of ink on the slide (it was ~7)


def test_every_figure_legend_follows_the_export_scale(qtbot):
    """The attention-cost figure's legends had the same flag (control: a fresh pyqtgraph legend has it)."""
    import pyqtgraph as pg

    from attnviz.gui.views.attention_cost_view import AttentionCostView
    from attnviz.selection import Selection

    assert pg.LegendItem().flags() & QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations  # the default
    view = AttentionCostView(Selection())
    qtbot.addWidget(view)
    legends = [it for it in view.figure.scene().items() if isinstance(it, pg.LegendItem)]
    assert legends and not any(lg.flags() & QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations for lg in legends)


def test_a_two_stack_model_says_which_stack_it_measures(qtbot):
    """translate with cross-attention selected plotted "Mean attention distance per head": the distances are the
    decoder's self-attention (cross-attention's rows and columns are two sequences), and the title did not say so."""
    from attnviz.gui.views.attention_distance_view import AttentionDistanceView
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    sel = Selection()
    view = AttentionDistanceView(sel)
    qtbot.addWidget(view)
    view.set_trace(run_trace(load_model("translate", device="cpu"), text="the big dog sees a small cat"))
    sel.update(part="cross")
    qtbot.waitUntil(lambda: "per head" in view.title_item.text, timeout=10000)
    assert "decoder self-attention" in view.title_item.text
    sel.update(part="enc")
    qtbot.waitUntil(lambda: "encoder self-attention" in view.title_item.text, timeout=10000)
    coref = AttentionDistanceView(Selection())  # control: a one-stack model's title names no stack
    qtbot.addWidget(coref)
    coref.set_trace(run_trace(load_model("coref", device="cpu"), text=SENTENCE))
    qtbot.waitUntil(lambda: "per head" in coref.title_item.text, timeout=10000)
    assert "self-attention" not in coref.title_item.text
