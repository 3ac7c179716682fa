"""coref ▸ Data set in the 1920×1080 window's dock (~600 × 687 px, issue 36): the mean pattern was 104 × 110 px under a
2 × 4 grid (the grid's colour bar was counted in the width it needs beside the map, though its cells carry their
numbers and it has no bar), its positions named every 5th. Beside the grid now, square, every position named at
12 px or more, the grid's numbers kept; the table keeps rows in view."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.views.dataset_view import DatasetView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

DOCK_1080 = (600, 687)  # the right group's Data set dock in a 1920×1080 window (measured under Xvfb)


def _settle(n=20):
    for _ in range(n):
        QApplication.processEvents()


def _on_screen(view, item):
    return view.canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()


@pytest.fixture(scope="module")
def coref_trace():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("coref", device="cpu"), text="The animal didn't cross the street because it was too tired")


def _view(qtbot, trace, size):
    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        view.set_trace(trace)
    _settle()
    return view


def test_the_mean_pattern_gets_the_room_beside_the_grid(qtbot, coref_trace):
    view = _view(qtbot, coref_trace, DOCK_1080)
    mean = _on_screen(view, view.pattern.image)
    assert view.split.side_by_side
    assert min(mean.width(), mean.height()) >= 230, mean  # was 104 × 110
    assert abs(mean.width() - mean.height()) <= 0.05 * mean.width(), mean  # square cells (14 × 14 positions)
    assert view.split.scroll.viewport().rect().contains(mean)
    n = view.result.patterns[view.part].shape[-1]
    for axis in (view.pattern.left, view.pattern.bottom):
        assert list(axis.visible_indices()) == list(range(n))  # every position named …
        assert not axis.major_only and axis._metrics().height() >= 12 * 1.1, axis._metrics().height()  # … at full size
        assert axis.style.font_pt() * axis.font_factor * 96 / 72 >= 12 - 0.05
    grid = _on_screen(view, view.grid.image)
    assert grid.width() / 4 >= 28, grid  # … and the grid's four heads keep room for their numbers, each shown
    # (at 30.4 px a cell, 0.3 px short of "0.00" at 12 px with its margins, all eight were hidden)
    assert len(view._cell_labels) == 8 and all(item.isVisible() for item in view._cell_labels)
    table = view.table
    assert view.splitter.sizes()[1] > 0 and table.viewport().height() >= 2 * table.rowHeight(0)


def test_a_tall_narrow_dock_keeps_the_mean_pattern_under_the_grid(qtbot, coref_trace):
    """The control: where under the grid gives the larger map (a tall dock), it stays there."""
    view = _view(qtbot, coref_trace, (480, 1100))
    assert not view.split.side_by_side
    assert _on_screen(view, view.pattern.image).top() > _on_screen(view, view.grid.image).bottom()
