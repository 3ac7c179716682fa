"""F5 on the Data set dock gives the figure the slide (issue 36, Deliver 5–6): presenting hid only the controls row,
and the table and the top inputs under the figure stayed — at 1280×720 the figure had the top ~60 % (mean map
~220 px, the grid's title on 3 lines, the table cut by its own scroll bar). Presented (``set_controls_visible(False)``,
what presentation mode and a lesson's scene call) the table and the list hide, the figure takes their height and the
grid's column the width the map leaves; leaving brings them back. Controls: the same view docked shows its table."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from dataset_views import scored_view, task_free_trace  # noqa: E402
from test_all_heads_pages import _lines  # noqa: E402 - lines a title is drawn in

SLIDE = (1280, 720)


def _settle():
    for _ in range(20):
        QApplication.processEvents()


def _map_side(view) -> float:
    box = view.canvas.mapFromScene(view.pattern.vb.sceneBoundingRect()).boundingRect()
    return min(box.width(), box.height())


def _present(view, lines: int) -> None:
    from attnviz.gui.panels.appearance import compose_style

    view.set_style(compose_style("light", True, "viridis", lines=lines))
    view.set_controls_visible(False)
    _settle()


@pytest.fixture(scope="module")
def trace_2x2(tmp_path_factory):
    return task_free_trace(tmp_path_factory.mktemp("m"), 2, 2)


def test_presented_the_figure_has_the_slide_and_the_table_comes_back(qtbot, trace_2x2):
    # a tall view first (the table under the figure is shown docked at this height): the control
    view = scored_view(qtbot, trace_2x2, SLIDE[0], 900)
    assert view.table.isVisible() and view.below.isVisible(), "control: docked, the table is under the figure"
    notice = view._parts.notice.text()
    assert notice and view._parts.notice.isVisible(), "control: docked, the notice (no held-out inputs) is shown"
    docked_map = _map_side(view)
    view.resize(*SLIDE)
    _present(view, SLIDE[1])
    assert not view.table.isVisible() and not view.top_list.isVisible() and not view.table_button.isVisible()
    # the notice over the figure is left to the caption under it, which says the same
    assert not view._parts.notice.isVisible() and notice in view.caption.text
    seen = view.split.scroll.viewport().height()
    assert seen >= 0.9 * view.height(), f"the figure has {seen} of {view.height()} px"
    side = _map_side(view)
    assert side >= 0.55 * SLIDE[1], f"mean map {side:.0f} px on a {SLIDE[1]}-px slide"
    assert _lines(view.grid.title) <= 2, f"grid title in {_lines(view.grid.title)} lines"
    # the map and the grid's column use the width: nothing wide left blank right of the map's colour bar
    bar = view.canvas.mapFromScene(view.pattern.bar.sceneBoundingRect()).boundingRect()
    assert view.canvas.width() - bar.right() <= 0.12 * view.canvas.width(), (bar, view.canvas.width())
    view.set_controls_visible(True)
    view.resize(SLIDE[0], 900)
    _settle()
    assert view.table.isVisible() and view.below.isVisible(), "the table did not come back"
    assert view._parts.notice.isVisible(), "the notice did not come back"
    assert abs(_map_side(view) - docked_map) <= 0.1 * docked_map


def test_a_paged_real_size_grid_presented_keeps_its_pages_without_the_table(qtbot, tmp_path):
    """30 × 9 heads presented: the figure alone, the grid still fitted a page at a time (its layers' rows tall enough
    for their numbers in the presented type, not squeezed into the slide), the page and the mean map in the part seen
    without scrolling."""
    from attnviz.gui.views.dataset_pages import MIN_MAP_PX, ROW_PX

    view = scored_view(qtbot, task_free_trace(tmp_path, 30, 9), *SLIDE)
    docked_rows = len(view.page.ranges()[0])
    _present(view, SLIDE[1])
    assert not view.table.isVisible() and view.split.paged
    layers, heads = view.page.ranges()
    assert len(layers) >= docked_rows and len(heads) == 9, (layers, docked_rows)  # the table's height to the page
    row_px = view.grid.vb.height() / len(layers)
    assert row_px >= ROW_PX - 1, f"{len(layers)} layers in rows of {row_px:.1f} px"
    # every head of the page carries its number in the presented type (rows of the docked 18 px hid them all)
    labels = list(view._cell_labels)
    assert len(labels) == len(layers) * len(heads) and all(item.isVisible() for item in labels), \
        f"{sum(item.isVisible() for item in labels)} of {len(layers) * len(heads)} numbers shown"
    assert row_px >= view.style.metrics(1.0).height(), row_px
    seen = view.split.scroll.viewport().rect()
    for item in (view.grid.vb, view.pattern.vb):
        assert seen.contains(view.canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()), item
    assert _map_side(view) >= MIN_MAP_PX
