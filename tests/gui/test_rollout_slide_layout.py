"""The rollout figure of a vision model (issue 36 item 10): its one colour bar stands at the figure's edge, not
between two maps (beside the first map it sat between raw attention and rollout in a slide's row), on a slide
and on screen (the row's centring is measured in the written file: tests/export/test_rollout_slide_rows.py)."""

from __future__ import annotations

import pytest
from attnviz.bench.traces import sample_trace
from tests.gui.test_rollout_one_bar import _at_slide_size
from tests.gui.test_views_rollout import _picture_rect, make


def _layout(view):
    pictures = [_picture_rect(vb, pic) for vb, pic in [view.input_panel[1:]] + [p[1:3] for p in view.panels.values()]]
    bars = [b.mapRectToScene(b.boundingRect()) for b in view.bars.values() if b.isVisible()]
    body = view.image_body.mapRectToScene(view.image_body.boundingRect())
    return pictures, bars, body


@pytest.mark.parametrize("mode", ["shared", "fixed"])
def test_one_bar_at_the_edge_of_the_figure(qtbot, mode):
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.scale_box.set_mode(mode)
    on_screen = _layout(view)
    on_slide = _at_slide_size(view, lambda: _layout(view), last=True)
    for where, (pictures, bars, _) in (("screen", on_screen), ("slide", on_slide)):
        assert len(bars) == 1, "control: one scale, one bar"
        bar = bars[0]
        assert bar.left() >= max(p.right() for p in pictures) - 1.0, (
            f"{where}: the colour bar ({bar.left():.0f}–{bar.right():.0f}) stands between the maps "
            f"{[round(p.left()) for p in pictures]}")


def test_per_map_bars_stay_beside_their_own_maps(qtbot):
    """Control: on three scales every map keeps its own bar, right of it."""
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.scale_box.set_mode("per-map")
    pictures, bars, *_ = _at_slide_size(view, lambda: _layout(view), last=True)
    assert len(bars) == 3
    for picture, bar in zip(pictures[1:], bars):
        assert picture.right() - 1.0 <= bar.left() <= picture.right() + 40, (picture, bar)
