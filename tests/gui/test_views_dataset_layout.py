"""The data-set view's layout in the docks it gets: a narrow one (the right group at 1280×720, ~274 px wide:
the figure legible, the table on its button — issue 36: a six-line title and the table left the grid a strip
and the mean map 40 px), a half-window one and the 1920×1080 one; controls, cell numbers, position labels."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.views.dataset_view import DatasetView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402
from dataset_views import make, scored_view, task_free_trace  # noqa: E402


def settle(n=20):
    for _ in range(n):
        QApplication.processEvents()


def on_screen(view, item):
    """The item's size in the canvas's pixels."""
    return view.canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()


def _table_on_its_button(view) -> None:
    """Asked for with the Table button, the table gets room for its rows; the button pressed again hides it."""
    view.table_button.setChecked(True)
    settle()
    assert view.splitter.sizes()[1] > 0 and view.table.viewport().height() >= view.table.rowHeight(0)
    view.table_button.setChecked(False)


def test_a_narrow_dock_shows_the_grid_and_mean_map_legibly_and_the_table_on_its_button(qtbot, induction_trace):
    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(274, 494)  # the Data set dock at 1280×720
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        view.set_trace(induction_trace)
    settle()
    L, _ = view.score_table().shape
    grid, mean = on_screen(view, view.grid.image), on_screen(view, view.pattern.image)
    assert grid.height() / L >= 20, f"grid rows {grid.height() / L:.0f} px"
    assert min(mean.width(), mean.height()) >= 80, f"mean map {mean.width()}×{mean.height()} px"
    assert view.table_button.isVisible() and view.splitter.sizes()[1] == 0  # the figure alone
    # the long facts (model, data, colour scale) are a caption under the figure, the title names the score
    assert "inputs" in view.caption.text and "inputs" not in view.grid.title.text
    # control: asked for, the table gets its room; a wide dock shows it without the button
    _table_on_its_button(view)
    view.resize(650, 770)
    settle()
    assert not view.table_button.isVisible() and view.splitter.sizes()[1] > 0
    assert view.canvas.minimumHeight() == 0  # the wide view's figure fills its part, no scrolling


def test_dataset_controls_never_widen_the_window_past_a_laptop_screen(qtbot, qapp):
    """Its dock is tabbed with the other views beside the head map: with the app's large type its
    controls (long score and source names) once asked for 971 px, and the window for 1769."""
    font = qapp.font()
    big = type(font)(font)
    big.setPointSizeF(font.pointSizeF() * 1.5)  # presentation-sized type, the worst case
    qapp.setFont(big)
    try:
        view = DatasetView(selection=Selection())
        qtbot.addWidget(view)
        view.show()
        assert view.minimumSizeHint().width() <= 600
        assert view.score_box.sizeHint().width() > view.score_box.minimumWidth()  # wide when there is room
    finally:
        qapp.setFont(font)


def _label_boxes(view):
    """Scene rectangles of the visible cell numbers, and of their cells."""
    vb = view.grid.vb
    out = []
    for item in view._cell_labels:
        if item.isVisible():
            text = item.textItem.mapRectToScene(item.textItem.boundingRect())
            pos = item.pos()
            cell = vb.mapViewToScene(pg_rect(pos.x() - 0.5, pos.y() - 0.5)).boundingRect()
            out.append((text, cell))
    return out


def pg_rect(x, y):
    from PySide6.QtCore import QRectF

    return QRectF(x, y, 1.0, 1.0)


def test_cell_numbers_fit_their_cells_or_are_hidden(qtbot, induction_trace):
    view, _ = make(qtbot, DatasetView, induction_trace)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    assert len(view._cell_labels) == 4
    QApplication.processEvents()
    boxes = _label_boxes(view)
    assert len(boxes) == 4  # a wide view writes every value, each inside its own cell
    for text, cell in boxes:
        # the painted text (its item's margins trimmed) lies within its cell
        assert cell.adjusted(-6, -6, 6, 6).contains(text), (text, cell)
    # cells narrower than "0.00" (a narrow dock, many heads; here: the full-width grid zoomed out) would let the
    # numbers spill over their neighbours: hidden instead, and back when the cells are wide again
    vb = view.grid.vb
    (x0, x1), (y0, y1) = vb.viewRange()
    vb.setRange(xRange=(0, 400), yRange=(y0, y1), padding=0)
    qtbot.waitUntil(lambda: not any(i.isVisible() for i in view._cell_labels), timeout=5000)
    vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
    qtbot.waitUntil(lambda: all(i.isVisible() for i in view._cell_labels), timeout=5000)


def test_controls_show_their_whole_text_in_a_half_window_dock(qtbot, induction_trace):
    """At 1280×720 the dock is ~390 px wide: the combos were cut to "previous-t" and "held-out in" (issue 36
    finding 10); the controls row now wraps and every combo shows its whole current text."""
    from PySide6.QtGui import QFontMetrics

    view, _ = make(qtbot, DatasetView, induction_trace)
    view.resize(390, 480)
    qtbot.wait(50)
    for box in (view.score_box, view.source_box):
        text_w = QFontMetrics(box.font()).horizontalAdvance(box.currentText())
        assert box.isVisible() and box.width() >= text_w + 20, (box.currentText(), box.width(), text_w)
        assert box.geometry().right() <= view.width()  # inside the dock, not past its edge


def test_the_mean_patterns_position_labels_are_every_fifth_when_crowded(qtbot):
    """24 key positions on a small square map collided; crowded, every 5th position is drawn at full size
    (the control: a large map names all 24)."""
    import pyqtgraph as pg

    from attnviz.gui.views.dataset_widgets import draw_mean_pattern
    from attnviz.gui.widgets.heatmap import LabelledHeatmap

    mean = np.random.default_rng(0).dirichlet(np.ones(24), size=24)
    shown = {}
    for side in (260, 1400):
        heat = LabelledHeatmap(lock_aspect=True)
        view = pg.GraphicsLayoutWidget()
        qtbot.addWidget(view)
        view.ci.addItem(heat)
        view.resize(side, side)
        view.show()
        draw_mean_pattern(heat, mean, 1, 0)
        qtbot.wait(50)
        shown[side] = [list(ax.visible_indices()) for ax in (heat.left, heat.bottom)]
    assert all(v == list(range(0, 24, 5)) for v in shown[260]), shown[260]
    assert all(v == list(range(24)) for v in shown[1400]), shown[1400]


def test_the_table_shows_its_rows_whole_without_a_sideways_scroll_in_a_1920x1080_dock(qtbot, induction_trace):
    """Issue 36: in the app at 1920×1080 (the right group's dock, ~650 × 770 px) the table showed 2 rows
    under a horizontal scroll bar, squeezed by the figure above and the top-inputs list beside it."""
    view, _ = make(qtbot, DatasetView, induction_trace)
    view.resize(650, 770)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    for _ in range(10):
        QApplication.processEvents()
    table = view.table
    n = table.rowCount()
    assert n == 4  # induction: 2 layers × 2 heads
    shown = table.viewport().height() // table.rowHeight(0)
    assert shown >= n, f"{shown} of {n} rows shown whole"
    assert not table.horizontalScrollBar().isVisible(), "the table scrolls sideways"
    # negative control: the same measure in a dock far too small for the table does see the fault
    view.resize(300, 300)
    for _ in range(10):
        QApplication.processEvents()
    assert table.horizontalScrollBar().isVisible() or table.viewport().height() // table.rowHeight(0) < n


def test_a_real_models_thirty_layers_keep_legible_rows_and_mean_map_in_a_wide_dock(qtbot, tmp_path):
    """Issue 36 (real sizes): in the 1920×1080 dock (~600 × 676 px) a 30-layer grid got ~40 px, every 7th layer
    named, and the mean map ~50 px with its colour bar's words cut: the figure now scrolls instead, each layer
    named at a row of at least 12 px. The control: a 2-layer model's figure still fits without scrolling."""
    shown = {}
    for layers in (30, 2):
        view = scored_view(qtbot, task_free_trace(tmp_path, layers, 9), 600, 676)
        grid, mean = on_screen(view, view.grid.image), on_screen(view, view.pattern.image)
        shown[layers] = (grid.height() / layers, min(mean.width(), mean.height()),
                         list(view.grid.left.visible_indices()), view.canvas.minimumHeight())
    row_px, mean_px, named, _ = shown[30]
    assert row_px >= 12 and named == list(range(30)), shown[30]
    assert mean_px >= 150, shown[30]
    assert shown[2][3] == 0 and shown[2][1] >= 70, shown[2]  # fits: no scrolling


def test_a_wide_low_dock_sets_the_mean_map_beside_the_grid(qtbot, induction_trace):
    """At 1280×720 the tabbed dock is ~970 × 490 px and the figure's share ~280 px tall: one above the other, a
    2-layer grid of 450-px cells left the mean map scrolled out of view. Beside the grid it is whole and large;
    so does the 1920×1080 dock (~600 × 676, where under the grid it was ~100 px); the control, a tall narrow
    dock, keeps it under the grid."""
    view, _ = make(qtbot, DatasetView, induction_trace)
    view.resize(972, 493)
    with qtbot.waitSignal(view.scores_ready, timeout=120000):
        pass
    settle()
    mean = on_screen(view, view.pattern.image)
    port = view.split.scroll.viewport().rect()
    assert min(mean.width(), mean.height()) >= 180 and port.contains(mean), (mean, port)
    assert view.split.side_by_side and view.canvas.minimumHeight() == 0
    # so low a dock shows the figure alone (the table had one visible row), the table on its button
    assert view.table_button.isVisible() and view.splitter.sizes()[1] == 0
    _table_on_its_button(view)
    view.resize(600, 676)
    settle()
    mean = on_screen(view, view.pattern.image)
    assert view.split.side_by_side and min(mean.width(), mean.height()) >= 150, mean
    view.resize(480, 1000)
    settle()
    assert not view.split.side_by_side
    assert on_screen(view, view.pattern.image).top() > on_screen(view, view.grid.image).bottom()


def test_a_14_head_grid_keeps_the_mean_map_under_it_in_a_600_px_dock(qtbot, tmp_path):
    """Qwen2-0.5B's 14 heads in the 1920×1080 dock (~600 × 676): beside the mean map the grid's heads were 12 px each
    (every 2nd named) and the map 110 px; side by side only when both fit across. The control: 2 heads go beside."""
    side = {}
    for heads in (14, 2):
        view = scored_view(qtbot, task_free_trace(tmp_path, 3, heads), 600, 676)
        grid = on_screen(view, view.grid.image)
        side[heads] = view.split.side_by_side
        if heads == 14:
            assert grid.width() / 14 >= 24, grid
    assert side == {14: False, 2: True}, side
