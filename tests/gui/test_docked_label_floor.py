"""The docked window's labels are never under 12 px (9 pt at 96 dpi), at any window size; an export keeps its own
floor (5 pt in a layout drawn ×1.8 on a 1920×1080 slide: 12 px there). Issue 36: a 1280×720 desk window drew
charlm's head map labels at 6.7–7.2 px ("readable up close"), a projected window is read from the back row."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from layout_audit import MIN_PX, pt_to_px  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.widgets.legible import EXPORT_FLOOR_PT, exporting, floor_pt, label_floor_pt  # noqa: E402


def _crowded_grid():
    """20 named rows in a 90 px figure: the labels cannot all fit at full size."""
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    holder = QWidget()
    holder.resize(1280, 720)  # a 1280×720 window
    grid = MatrixGrid("Q", parent=holder)
    toks = [f"tok{i}" for i in range(20)]
    grid.set_data(np.random.default_rng(0).normal(size=(20, 3)), title="Q", row_labels=toks,
                  col_labels=["a", "b", "c"])
    grid.resize(220, 90)
    holder.show()
    QApplication.processEvents()
    return holder, grid


def test_docked_labels_thin_rather_than_shrink_under_12_px(qapp):
    holder, grid = _crowded_grid()
    try:
        docked = pt_to_px(grid.row_label_font().pointSizeF())
        assert docked >= MIN_PX - 0.05, f"docked row labels {docked:.1f} px"
        assert grid.row_label_stride() > 1  # every k-th named instead (the audit reports it up to 24 rows)
        # the export's layout of the same grid may use its own, smaller floor (it is drawn larger): the page's 12 px
        # as ink (label_floor_pt: 5 pt of type × DejaVu's em over its letters' height, issue 36 Deliver 4)
        with exporting():
            exported = grid.row_label_font().pointSizeF()
            page_floor = label_floor_pt(grid._fonts()[2], grid.style, grid)
            assert EXPORT_FLOOR_PT < page_floor < grid.style.font_pt(1.1)
            assert exported < grid.style.font_pt(1.1) and abs(exported - page_floor) < 0.6
        assert grid.row_label_font().pointSizeF() * 96 / 72 >= MIN_PX - 0.05  # docked again after the export
    finally:
        holder.close()
        holder.deleteLater()


def test_the_floor_by_case():
    """Docked: 9 pt whatever the window; exporting: 5 pt (×1.8 = 12 px on a 1920×1080 slide); presenting: in
    proportion to the screen (unchanged)."""
    style = PRESETS["default"]
    assert floor_pt(style) == 9.0
    with exporting():
        assert floor_pt(style) == EXPORT_FLOOR_PT
        assert EXPORT_FLOOR_PT * 1.8 * 96 / 72 >= MIN_PX - 0.05  # the slide's labels at 12 px
    assert floor_pt(style) == 9.0
    presenting = style.with_(font_scale=2.1)
    assert floor_pt(presenting) == 9.0
    with exporting():
        assert floor_pt(presenting) == 9.0  # a presentation-style export keeps the presenting floor
