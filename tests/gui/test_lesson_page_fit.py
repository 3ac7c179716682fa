"""A lesson's scene is a page (issue 36): the patch filters, which scroll in a dock rather than shrink, fit a
lesson's page — no scroll bar, their note on screen, every caption as wide as its tile's pitch allows."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from layout_audit import scroll_problems  # noqa: E402


def _filters_view(page: bool, w: int, h: int, scale: float):
    from dataclasses import replace

    from attnviz.gui.style import ViewStyle
    from attnviz.gui.views.filter_pca_view import FilterPCAView
    from attnviz.gui.views.lesson_page import on_page

    style = ViewStyle()
    style = replace(style, font_scale=scale)  # presenting: large type, as on a lesson's page
    view = FilterPCAView(style=style)
    view.set_filters(np.random.default_rng(0).normal(size=(48, 3, 8, 8)))
    if page:
        on_page(view)
    view.resize(w, h)
    view.show()
    for _ in range(6):
        QApplication.processEvents()
    return view


@pytest.mark.parametrize("size, scale", [((1268, 600), 1.6), ((1908, 780), 2.1)], ids=["1280x720", "1920x1080"])
def test_patch_filters_fit_a_lesson_page(qapp, size, scale):
    view = _filters_view(True, *size, scale)
    control = _filters_view(False, *size, scale)  # the dock's view at the same size: it scrolls (the old lesson page)
    try:
        assert scroll_problems(view, "page") == []
        assert view.note_item.isVisible() and view.note_item.sceneBoundingRect().bottom() <= view.canvas.height() + 1
        # the captions are not squeezed: each tile's pitch leaves its caption the width it needs
        image_px = view.vb.mapViewToScene(view.vb.viewRect().bottomRight()).x() - view.vb.mapViewToScene(
            view.vb.viewRect().topLeft()).x()
        pitch_px = image_px / max(view.image.width(), 1) * (view.components.shape[1] + max(1, view.components.shape[1] // 4))
        assert pitch_px >= view._cell_px() - 1, (pitch_px, view._cell_px())
        assert scroll_problems(control, "dock"), "the control did not scroll: the test shows nothing"
    finally:
        for v in (view, control):
            v.close()
            v.deleteLater()


def test_page_columns_prefers_captions_that_fit():
    from attnviz.gui.views.lesson_page import page_columns

    # a wide, short page: more tiles a row, each larger than seven a row in four rows
    cols, pitch = page_columns(28, 1900, 620, 28, 8, 2, 100)
    assert cols > 7 and pitch >= 100
    # a tall narrow page: fewer a row
    cols_narrow, _ = page_columns(28, 500, 2000, 28, 8, 2, 60)
    assert cols_narrow < cols
