"""Rollout's four pictures at the size a 1280×720 window gives the view (issue 36, 1280×720 first-class):
the pictures and their captions fill the panels' height. Each cell's own layout margins (9 px on every side)
and the grid's took ~18 px of every row, and the maps came out ~100 px in a 430 px figure."""

from __future__ import annotations

import pytest

from attnviz.bench.traces import sample_trace
from tests.gui.test_views_rollout import _picture_rect, make


def _used_height(view) -> float:
    """The share of the panels' height that two rows of caption + map take (raw attention's: in two by two and with
    the input beside the maps, a dock's arrangements, it has a row under it)."""
    grid = view.image_body
    assert grid.arrangement in ("grid", "beside"), grid.arrangement
    label, vb, picture, _ = view.panels["raw"]
    side = _picture_rect(vb, picture).height()
    return 2 * (side + label.geometry().height()) / grid.geometry().height()


@pytest.mark.parametrize("size", [(590, 500), (709, 505)])
def test_pictures_fill_the_panels_height_in_a_compact_dock(qtbot, size):
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    view.resize(*size)
    qtbot.waitUntil(lambda: view.canvas.height() < 500, timeout=10_000)
    qtbot.wait(50)
    sides = {round(_picture_rect(p[1], p[2]).height()) for p in view.panels.values()}
    assert len(sides) == 1, sides  # the three maps at one scale
    assert _used_height(view) >= 0.88, (_used_height(view), sides)


def test_the_measure_sees_a_squeezed_picture(qtbot):
    """Control: margins put back inside the cells, the same measure finds the pictures short of the height."""
    view, _ = make(qtbot, sample_trace("vit", n_layers=3, grad=True))
    for cell in view.image_body.cells:
        cell.layout.setContentsMargins(9, 9, 9, 9)
    view.resize(590, 500)
    qtbot.waitUntil(lambda: view.canvas.height() < 500, timeout=10_000)
    qtbot.wait(50)
    assert _used_height(view) < 0.88
