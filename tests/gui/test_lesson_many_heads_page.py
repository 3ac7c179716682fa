"""Live lesson scene 5 ("Many heads, one output: concat · W_O") at 1280×720 (issue 36): the to-scale figure is
bound by its height on the wide, short page; it stood along the page's left edge with 60 px patterns P_h over token
rows named at the legible floor (12 px, the labels' own size 21 px). Now the patterns give way when rows a full
label line tall leave no readable pattern, and the figure stands in the middle of the page.

Then the live page dropped both patterns at 1280×720 and 1920×1080 while the exported deck draws them and the
caption's claim is "2 heads that look differently" (issue 36, audit a37): the rows now shrink toward the lesson's
12 px floor so that each head's pattern stays above its Z."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QFontInfo  # noqa: E402

PAGE = (1240, 441)  # the figure's room on the lesson's page in a 1280×720 window (measured)


def _figure(qtbot, size, T=19, H=2, dh=32, D=64, lines=720):
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure
    from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, HELD_FLOOR

    rng = np.random.default_rng(0)
    fig = ConcatFigure(compose_style("light", True, "viridis", lines=lines))
    fig.setProperty(HELD_FLOOR, DOCKED_FLOOR_PT)  # as the lesson's stage holds it: 12 px at every screen size
    qtbot.addWidget(fig)
    P = rng.random((H, T, T))
    fig.set_data(rng.normal(size=(H, T, dh)), rng.normal(size=(H * dh, D)), rng.normal(size=(T, D)),
                 [f"t{i}" for i in range(T)], P=P / P.sum(-1, keepdims=True), b_O=rng.normal(size=D))
    fig.resize(*size)
    fig.grab()
    return fig


@pytest.mark.parametrize("size, lines", [(PAGE, 720), ((1176, 402), 720), ((1860, 600), 1080)])
def test_the_page_keeps_every_heads_pattern_and_names_every_row(qtbot, size, lines):
    """The lesson's page at 1280×720 (page and dock) and 1920×1080: P_0 and P_1 drawn, at least 2 label lines tall,
    above their Z; every token row named at 12 px or more (the rows gave the patterns their height)."""
    fig = _figure(qtbot, size, lines=lines)
    r = fig.rects
    label = QFontInfo(fig._label_font()).pixelSize()
    for h in (0, 1):
        assert f"P{h}" in r, sorted(r)  # dropped before
        assert r[f"P{h}"].bottom() <= r[f"Z{h}"].top() and r[f"P{h}"].height() >= 2 * label, r[f"P{h}"]
    assert QFontInfo(fig.row_label_font()).pixelSize() >= 12, QFontInfo(fig.row_label_font()).pixelSize()
    assert fig.row_label_stride() == 1  # every token named
    assert r["labels"].bottom() <= fig.height(), (r["labels"], fig.height())


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


def test_a_page_too_short_for_floor_rows_leaves_the_patterns_out(qtbot):
    """Control: where 19 rows at the 12 px floor leave no readable pattern, none is drawn as a smear, and the rows
    keep the room."""
    fig = _figure(qtbot, (1176, 330))
    assert "P0" not in fig.rects and "P1" not in fig.rects, sorted(fig.rects)
