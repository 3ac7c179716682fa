"""Rollout figure (issue 36 finding 10): on one colour scale one bar is drawn, not three identical ones, and
the pictures stay in aligned columns in each arrangement (a narrower bar label had shifted a panel ~20 px); the text
figure's strips sit in the middle of a slide instead of leaving its bottom half blank."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from attnviz.bench.traces import sample_trace
from tests.gui.test_views_rollout import _picture_rect, make


def _at_slide_size(view, measure, last: bool = False):
    """``measure()`` while the figure is laid out for a 1920×1080 slide (what an export draws); ``last``: at its
    last layout pass at that size (the panels arranged for the slide), else its first."""
    img = QImage(1920, 1080, QImage.Format.Format_ARGB32)
    painter, seen, orig = QPainter(img), [], view._relayout
    src = QRectF(0, 0, 1920 / 1.8, 1080 / 1.8)

    def record(geom):
        orig(geom)
        if geom == src:
            seen.append(measure())

    view._relayout = record
    try:
        view.render_figure(painter, QRectF(0, 0, 1920, 1080), 1.8)
    finally:
        painter.end()
        view._relayout = orig
    return seen[-1] if last else seen[0]


def _resize(qtbot, view, size) -> None:
    """Resize the view and wait until its panels are arranged for the new canvas."""
    view.resize(*size)
    qtbot.waitUntil(lambda: view.canvas.viewport().width() <= size[0]
                    and view._arranged == (view.canvas.viewport().size(), view.scale_box.mode), timeout=10_000)


def _lefts(view):
    panels = [view.input_panel[1:]] + [p[1:3] for p in view.panels.values()]
    return [_picture_rect(vb, pic).left() for vb, pic in panels]  # input, raw, rollout, grad


def _tops(view):
    panels = [view.input_panel[1:]] + [p[1:3] for p in view.panels.values()]
    return [_picture_rect(vb, pic).top() for vb, pic in panels]


@pytest.mark.parametrize("mode,drawn", [("shared", ["grad"]), ("fixed", ["grad"]),
                                        ("per-map", ["raw", "rollout", "grad"])])
def test_one_bar_on_one_scale_and_the_pictures_in_aligned_columns(qtbot, mode, drawn):
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.scale_box.set_mode(mode)
    _resize(qtbot, view, (590, 500))
    assert [n for n, bar in view.bars.items() if bar.isVisible()] == drawn  # per map: three scales, three bars
    if len(drawn) == 1:
        assert "all three" in view.bars["grad"].label
    _resize(qtbot, view, (590, 500))  # a dock two by two
    seen = [(_lefts(view), view.image_body.arrangement, _tops(view))]
    _resize(qtbot, view, (1000, 330))  # a wide, low dock: one row
    seen.append((_lefts(view), view.image_body.arrangement, _tops(view)))
    seen.append(_at_slide_size(view, lambda: (_lefts(view), view.image_body.arrangement, _tops(view)), last=True))
    assert [name for _, name, _ in seen] == ["grid", "row", "beside"], f"control: each arrangement once {seen}"
    for lefts, name, tops in seen:
        inp, raw, rollout, grad = lefts
        if name == "grid":
            assert abs(inp - rollout) <= 1.0 and abs(raw - grad) <= 1.0, lefts
        elif name == "row":  # the pictures side by side on one line
            assert inp < raw < rollout < grad and max(tops) - min(tops) <= 1.0, (lefts, tops)
        else:  # the input left of raw attention and rollout, gradient rollout under raw attention
            assert inp < raw < rollout and abs(raw - grad) <= 1.0 and abs(tops[1] - tops[2]) <= 1.0, (lefts, tops)


def test_text_strips_sit_in_the_middle_of_a_slide(qtbot):
    view, _ = make(qtbot, sample_trace("encoder", T=9, grad=True))
    assert view._body is view.text_body

    def where():
        strips = [s.mapRectToScene(s.boundingRect()) for s in view.strips.values()]
        body = view.text_body.mapRectToScene(view.text_body.boundingRect())
        return min(r.top() for r in strips), max(r.bottom() for r in strips), body

    top, bottom, body = _at_slide_size(view, where)
    centre = (top + bottom) / 2
    assert body.top() + body.height() / 3 < centre < body.bottom() - body.height() / 3, (top, bottom, body)
    # the short input's strips grow into the slide (test_rollout_fill_masked.py) and stay inside the body
    assert body.top() - 1 <= top and bottom <= body.bottom() + 1, (top, bottom, body)
    assert bottom - top > body.height() / 2, (top, bottom, body)
