"""Live lesson scene 5 ("Many heads, one output: concat · W_O") at 1280×720 (issue 36): the to-scale figure is
bound by its height on the wide, short page; it stood along the page's left edge with 60 px patterns P_h over token
rows named at the legible floor (12 px, the labels' own size 21 px). Now the patterns give way when rows a full
label line tall leave no readable pattern, and the figure stands in the middle of the page."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QFontInfo  # noqa: E402

PAGE = (1240, 441)  # the figure's room on the lesson's page in a 1280×720 window (measured)


def _figure(qtbot, size, T=19, H=2, dh=32, D=64):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure

    rng = np.random.default_rng(0)
    fig = ConcatFigure(compose_style("light", True, "viridis", lines=720))
    qtbot.addWidget(fig)
    P = rng.random((H, T, T))
    fig.set_data(rng.normal(size=(H, T, dh)), rng.normal(size=(H * dh, D)), rng.normal(size=(T, D)),
                 [f"t{i}" for i in range(T)], P=P / P.sum(-1, keepdims=True), b_O=rng.normal(size=D))
    fig.resize(*size)
    fig.grab()
    return fig


def test_the_page_names_its_rows_near_the_labels_own_size(qtbot):
    fig = _figure(qtbot, PAGE)
    label_px, own_px = QFontInfo(fig.row_label_font()).pixelSize(), QFontInfo(fig._label_font()).pixelSize()
    assert label_px >= 0.85 * own_px, (label_px, own_px)  # 11 of 18 px here before (the lesson: 12 of 21)
    assert fig.row_label_stride() == 1  # every token named


def test_the_figure_stands_in_the_middle_of_the_page(qtbot):
    fig = _figure(qtbot, PAGE)
    r = fig.rects
    left, right = r["labels"].left(), fig.width() - r["A"].right()
    assert right > 40, right  # height-bound: spare width to share
    assert abs(left - right) <= 2, (left, right)


def test_a_tall_page_keeps_the_patterns(qtbot):
    """Control: where rows a full line tall leave room, each head's pattern stays above its Z."""
    fig = _figure(qtbot, (1240, 900))
    assert "P0" in fig.rects and "P1" in fig.rects
    assert QFontInfo(fig.row_label_font()).pixelSize() == QFontInfo(fig._label_font()).pixelSize()


@pytest.mark.parametrize("size", [(900, 600), (1067, 600)])
def test_a_figure_that_fills_its_width_is_not_moved(qtbot, size):
    fig = _figure(qtbot, size)
    assert fig.rects["labels"].left() <= 6 + 1 or fig.width() - fig.rects["A"].right() <= 6 + 1


DOCK = (1176, 402)  # the figure's room when the lesson sits in a 1280×720 window's 1216×662 (measured, issue 36)


def test_the_dock_names_its_rows_at_the_other_scenes_size(qtbot):
    """In the lesson's dock of a 1280×720 window, scene 5's 19 rows are named at 14 px or more, as the other scenes'
    T×T maps are (14.2 px there); they were 12 px, the floor, under the patterns P_h."""
    fig = _figure(qtbot, DOCK)
    assert QFontInfo(fig.row_label_font()).pixelSize() >= 14, QFontInfo(fig.row_label_font()).pixelSize()
    assert fig.row_label_stride() == 1
    last = fig.rects["labels"]  # no label cut: the 19 rows fit the room under the titles
    assert last.bottom() <= fig.height(), (last, fig.height())
