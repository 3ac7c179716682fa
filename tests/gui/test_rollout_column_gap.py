"""Issue 36 item 10: the Rollout tab of an image model, two by two on one colour scale, leaves no gap between its
columns where no bar is drawn (the hidden bars beside the input and rollout took ~90 px between the columns)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnviz.bench.traces import sample_trace
from tests.gui.test_views_rollout import _picture_rect, make


def _gap(view) -> tuple[float, float, float]:
    """(gap between the columns' pictures, left picture's top-left x of each row) on screen."""
    for _ in range(3):
        QApplication.processEvents()
    view.figure.layout.activate()
    rects = [_picture_rect(vb, pic) for vb, pic in [view.input_panel[1:]] + [p[1:3] for p in view.panels.values()]]
    inp, raw, rollout, grad = rects
    return raw.left() - inp.right(), grad.left() - rollout.right(), abs(inp.left() - rollout.left())


@pytest.mark.parametrize("size", [(1000, 700), (740, 500)])
@pytest.mark.parametrize("mode", ["shared", "fixed"])
def test_no_gap_between_the_columns_on_one_scale(qtbot, size, mode):
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.resize(*size)
    view.scale_box.set_mode(mode)
    assert view.image_body.cols == 2
    top, bottom, misaligned = _gap(view)
    spacing = view.image_body.layout.horizontalSpacing()
    for gap in (top, bottom):
        assert 0 <= gap <= spacing + 12, f"{gap:.0f} px between the columns ({mode}, {size})"
    assert misaligned <= 1.0


def test_per_map_keeps_each_bar_beside_its_map(qtbot):
    """Control: on three scales the rollout's bar stands between the columns, and the input stays aligned with it."""
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.resize(1000, 700)
    view.scale_box.set_mode("per-map")
    top, bottom, misaligned = _gap(view)
    bar = view.bars["rollout"]
    assert bottom >= bar.width(), (bottom, bar.width())
    assert abs(top - bottom) <= 1.0 and misaligned <= 1.0
