"""The patch-filter PCA page (deck page 14) laid out for a 1920×1080 slide: every "PCk / share" caption sits between its
tile and the next row of tiles. The page's height bounds the tiles (the screen scrolls instead): the captions' room was
set for the width's 170 px pitch under ~120 px tiles, and each caption ran into the tile below. Control: the last
row's captions are found under their tiles (the measurement sees captions at all)."""

from __future__ import annotations

import os
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _caption_gaps(qapp) -> list[float]:
    """For each caption, scene pixels from its bottom to the top of the tile row below it (last row: the mosaic's end)."""
    from PySide6.QtCore import QPointF, QRectF

    from attnviz.figures.render import layout_scale
    from attnviz.figures.scenes import build_scene_figure
    from attnviz.gui.widgets.legible import exporting
    from attnviz.lessons.lesson import load_lesson

    scene = next(s for s in load_lesson("attention").scenes if s.view == "filters-pca")
    view, _sel, _cap, _ = build_scene_figure(replace(scene, claim=None), measure=False)
    try:
        w, h = 1920, 1080 * (1 - 0.07 - 0.05)  # the slide's body: title and caption bands off
        s = layout_scale(w, h)
        with exporting():
            view._relayout(QRectF(0, 0, w / s, h / s))
            P = view.components.shape[-1]
            rows = -(-len(view.captions) // view.cols)
            row_h = view.image.image.shape[0] / rows  # tile row and its caption room, in tile units
            gaps = []
            for i, item in enumerate(view.captions):
                r = i // view.cols
                below = view.vb.mapViewToScene(QPointF(0, (r + 1) * row_h)).y()
                top_of_tile = view.vb.mapViewToScene(QPointF(0, r * row_h + P)).y()
                box = item.sceneBoundingRect()
                assert box.top() >= top_of_tile - 1, (i, box, top_of_tile)
                gaps.append(below - box.bottom())
        return gaps
    finally:
        view.close()


def test_captions_stay_above_the_next_row(qapp):
    gaps = _caption_gaps(qapp)
    assert len(gaps) == 28 and min(gaps) >= 0, [round(g, 1) for g in gaps]
