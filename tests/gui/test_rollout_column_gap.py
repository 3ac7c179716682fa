"""Issue 36 item 10: the Rollout tab of an image model, on one colour scale, leaves no gap between neighbouring
pictures where no bar is drawn (the hidden bars beside the input and rollout took ~90 px between the columns of two
by two), in whichever arrangement the room gets (rollout_arrangement.py), and pictures of one column stay aligned."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnviz.bench.traces import sample_trace
from attnviz.gui.views.rollout_panels import _natural_width
from tests.gui.test_views_rollout import _picture_rect, make


def _gaps(view) -> tuple[list[tuple[str, float]], float]:
    """([(pair, empty px between the two pictures, how much wider than its picture the right one's caption is) for
    each two side by side in a row], the largest misalignment of two pictures in one column) on screen."""
    for _ in range(3):
        QApplication.processEvents()
    view.figure.layout.activate()
    names = ["input", "raw", "rollout", "grad"]
    panels = [view.input_panel] + [p[:3] for p in view.panels.values()]
    rects = [_picture_rect(vb, pic) for _, vb, pic in panels]
    # a caption wider than its picture widens its column: the picture, against the column's right edge, may leave
    # up to that much more to its left (small maps under "layer 2, heads averaged")
    wider = [max(0.0, _natural_width(label) - r.width()) for (label, _, _), r in zip(panels, rects)]
    places = view.image_body.places
    gaps, misaligned = [], 0.0
    for i, (ri, ci, _) in enumerate(places):
        for j, (rj, cj, _) in enumerate(places):
            if ri == rj and cj == ci + 1:
                gaps.append((f"{names[i]}–{names[j]}", rects[j].left() - rects[i].right(), wider[j]))
            if j > i and ci == cj:
                misaligned = max(misaligned, abs(rects[i].left() - rects[j].left()))
    return gaps, misaligned


@pytest.mark.parametrize("size", [(1000, 700), (740, 500), (590, 500)])
@pytest.mark.parametrize("mode", ["shared", "fixed"])
def test_no_gap_between_the_columns_on_one_scale(qtbot, size, mode):
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.resize(*size)
    view.scale_box.set_mode(mode)
    gaps, misaligned = _gaps(view)
    assert gaps, "control: pictures side by side"
    spacing = view.image_body.layout.horizontalSpacing()
    for pair, gap, wider in gaps:
        assert 0 <= gap and max(0.0, gap - wider) <= spacing + 12, (
            f"{gap:.0f} px between {pair}, its caption {wider:.0f} px wider ({mode}, {size}, {view.image_body.arrangement})")
    assert misaligned <= 1.0


@pytest.mark.parametrize("size", [(1000, 700), (590, 500)])
def test_per_map_keeps_each_bar_beside_its_map(qtbot, size):
    """Control: on three scales a bar stands between two pictures of a row, and the columns stay aligned."""
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.resize(*size)
    view.scale_box.set_mode("per-map")
    gaps, misaligned = _gaps(view)
    bar = view.bars["raw"].width()
    assert max(gap for _, gap, _ in gaps) >= bar, (gaps, bar, view.image_body.arrangement)
    assert misaligned <= 1.0
