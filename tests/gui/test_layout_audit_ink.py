"""Layout audit in ink (issue 36, Deliver 4: "nothing under 12 px"): row and column labels of exported and presented
figures ink at least 12 px, measured as the letters' height (``layout_audit.ink_px``), not as the type size. At the
12-px type floor DejaVu's letters ink 10-11 px: a 24-token head map on a 1280×720 slide named its rows in 11-px
letters, the matrix form's X, Q, K, V rows inked 9-10 px on a slide and in F5, below the docked figure's 12."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF, QSize  # noqa: E402

from layout_audit import MIN_PX, grid_problems, ink_px, scene_problems  # noqa: E402
from walkthrough_fixtures import matrix_form_shown  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402

SIZES = ((1280, 720), (1920, 1080))


@pytest.fixture(scope="module")
def trace24():
    return sample_trace("decoder", T=24, n_heads=2, d_model=16)


def _state(trace):
    from attnviz.gui.panels.trace_defaults import trace_defaults
    from attnviz.selection import SelectionState

    return SelectionState(**trace_defaults(None, trace, None, True))


def _label_problems(problems: list[str]) -> list[str]:
    return [p for p in problems if " ink " in p]


def test_the_ink_measure_sees_12_px_type(qapp):
    """Control: the floor as type (9 pt on screen; an export's 12 px of type on a ×1.8 slide) inks under 12 px,
    which the measure reports; 12-px ink passes."""
    from attnviz.gui.style import ViewStyle
    from attnviz.gui.widgets.legible import export_floor_pt, exporting, label_floor_pt

    font = ViewStyle().font()
    assert ink_px(font) < MIN_PX  # 9 pt: 10 px of ink on screen
    font.setPointSizeF(export_floor_pt(1.8))
    assert ink_px(font, 1.8) < MIN_PX  # the page's 12-px type
    with exporting(1.8):
        font.setPointSizeF(label_floor_pt(font, ViewStyle()))
    assert ink_px(font, 1.8) >= MIN_PX


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_head_map_export_labels_ink_12_px(qapp, trace24, size):
    from attnviz.figures.registry import make_figure
    from attnviz.figures.render import layout_scale
    from attnviz.gui.widgets.legible import exporting

    w, h = size
    scale = layout_scale(w, h)
    view, _ = make_figure("head-map", trace24, _state(trace24), None, None)
    try:
        with exporting(scale):  # as render_figure lays it out
            view._relayout(QRectF(0, 0, w / scale, h / scale))
            problems = _label_problems(scene_problems(view.canvas.scene(), scale, MIN_PX, f"head map {w}×{h}"))
    finally:
        view.close()
        view.deleteLater()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_matrix_form_export_labels_ink_12_px(qapp, trace24, size):
    from attnviz.figures.registry import make_figure
    from attnviz.figures.render import layout_scale
    from attnviz.gui.walkthrough.figure import page_layout
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    w, h = size
    scale = layout_scale(w, h)
    view, _ = make_figure("matrix-form", trace24, _state(trace24), None, None)
    problems = []
    try:
        fig = view.figure_widget
        with page_layout(view, fig, QSize(int(w / scale), int(h / scale)), scale) as board:
            for grid in view.findChildren(MatrixGrid):
                problems += grid_problems(grid, board, MIN_PX, f"matrix form {w}×{h}")
        assert view.findChildren(MatrixGrid)
    finally:
        view.close()
        view.deleteLater()
    assert not _label_problems(problems), "\n".join(problems)


def test_matrix_form_presented_rows_ink_12_px(qtbot, trace24):
    """F5 on a 1280×720 screen: the X, Q, K, V rows ink the docked 12 px (the T×T maps on screen keep the type
    floor for now, as docked: their rows are as tall as their named columns are wide)."""
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.style import PRESETS
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    w = matrix_form_shown(qtbot, trace24, (1280, 720), query=12, section="head", style=PRESETS["presentation"])
    for _ in range(5):
        QApplication.processEvents()
    grids = [g for g in w.findChildren(MatrixGrid) if g.isVisibleTo(w) and g.values.size and g.row_labels
             and not g.col_labels and g.values.shape[0] > 1]
    assert grids
    small = [f"{g.title}: {ink_px(g.row_label_font()):.0f} px" for g in grids if ink_px(g.row_label_font()) < MIN_PX]
    assert not small, small
