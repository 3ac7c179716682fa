"""The lesson deck's figures use their page (attnviz.figures.fill): the token-lines pages once sat in the top middle
third of the band with half the page white, and the causal-mask page's three 19 × 19 maps came out 215, 227 and
253 px wide (at 100 dpi) though they are one shape; at one size, the three were bound by the page's width and ~35 %
of its height tall, a white band above and below (issue 36): M, its "−∞" too small to draw, now folds into S + M's
hatch as on screen, and the two maps left fill the height. Pages rasterised from the PDF as the deck writes them; the
same page drawn without filling is the control (its ink measured by the same code must fail)."""

from __future__ import annotations

import os
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests.export.test_deck_page_raster import _raster  # noqa: E402

TITLE, CAPTION = 0.07, 0.05  # the page's title and caption bands (figures.render._body), shares of its height
FILLED = 0.85  # the figure's ink covers at least this share of its band's width or of its height


def _scene_pdf(tmp, view: str, fill: bool = True):
    """The built-in lesson's first scene of ``view`` alone, as the deck writes it (``fill=False``: as before)."""
    from attnviz.figures.render import ExportOptions, export_widget
    from attnviz.figures.scenes import build_scene_figure, export_lesson_pdf
    from attnviz.lessons.lesson import load_lesson

    lesson = load_lesson("attention")
    scene = next(s for s in lesson.scenes if s.view == view)
    if fill:
        export_lesson_pdf(replace(lesson, scenes=[scene]), tmp / f"{view}.pdf")
    else:
        fig, _selection, caption, _ = build_scene_figure(scene)
        try:
            export_widget(fig, tmp / f"{view}.pdf", ExportOptions(title=scene.title, caption=caption))
        finally:
            fig.close()
    return _raster(tmp / f"{view}.pdf", 1, tmp / f"{view}.png")


def band_fill(rgb: np.ndarray) -> tuple[float, float]:
    """(width share, height share) of the figure band that the ink's bounding box covers."""
    h = rgb.shape[0]
    band = rgb[int(h * TITLE) + 2: h - int(h * CAPTION) - 2]
    ink = (np.abs(band - 255).sum(axis=2) > 60)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return (cols[-1] - cols[0]) / band.shape[1], (rows[-1] - rows[0]) / band.shape[0]


def longest_runs(rgb: np.ndarray, vertical: bool = False, parts: int = 3) -> list[int]:
    """The longest run of coloured (saturated, viridis) pixels along a row (``vertical``: a column) in each of
    ``parts`` equal slices of the page's width; text, hatch and paper are grey."""
    sat = rgb.max(axis=2) - rgb.min(axis=2) > 40
    w = rgb.shape[1]
    out = []
    for third in range(parts):
        part = sat[:, third * w // parts:(third + 1) * w // parts]
        best = 0
        for line in (part.T if vertical else part):
            padded = np.concatenate([[False], line, [False]])
            edges = np.flatnonzero(padded[1:] != padded[:-1])
            if edges.size:
                best = max(best, int((edges[1::2] - edges[::2]).max()))
        out.append(best)
    return out


def map_widths(rgb: np.ndarray, parts: int = 3) -> list[int]:
    """Each slice's widest coloured run: a map's width (its last row has no masked cells; colour bars are narrow)."""
    return longest_runs(rgb, parts=parts)


MASK_MAPS = 2  # the causal mask's maps on a slide: S + M (M's hatch) and P, M folded (its "−∞" under the floor)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fill")
    return {"lines": _scene_pdf(tmp, "token-lines"), "lines-unfilled": _scene_pdf(tmp, "token-lines", fill=False),
            "mask": _scene_pdf(tmp, "causal-mask")}


def test_token_lines_page_uses_its_band(qapp, pages):
    assert max(band_fill(pages["lines"])) >= FILLED, band_fill(pages["lines"])


def test_unfilled_token_lines_page_is_caught(qapp, pages):
    """Control: the page as drawn before (layout scale of the page, no growing) leaves the band half empty."""
    assert max(band_fill(pages["lines-unfilled"])) < FILLED, band_fill(pages["lines-unfilled"])


def test_causal_mask_maps_are_drawn_at_one_size(qapp, pages):
    widths = map_widths(pages["mask"], MASK_MAPS)
    assert min(widths) > pages["mask"].shape[1] * 0.2, widths  # both maps found, not text or bars
    assert max(widths) <= min(widths) * 1.04, widths


def test_causal_mask_maps_use_the_page_height(qapp, pages):
    """The 16:9 page's square maps are half its height or more (three side by side: ~35 %, white bands above and
    below); a map's height is its widest run (square cells)."""
    page = pages["mask"]
    assert min(map_widths(page, MASK_MAPS)) >= 0.5 * page.shape[0], (map_widths(page, MASK_MAPS), page.shape)


class _Figure:
    """A figure laid out like a capped view: a box ``side`` layout px square at the top left of its layout
    (``full``: the whole layout filled, as a heatmap page)."""

    class style:  # noqa: N801 - the attribute views have
        background = "#ffffff"

    def __init__(self, side: float = 200.0, full: bool = False):
        self.side, self.full = side, full

    def render_figure(self, painter, rect, scale):
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QColor

        painter.fillRect(rect, QColor("#ffffff"))
        w, h = (rect.width(), rect.height()) if self.full else (self.side * scale, self.side * scale)
        painter.fillRect(QRectF(rect.left(), rect.top(), w, h), QColor("#440154"))


def test_a_small_figure_grows_and_is_centred(qapp):
    from PySide6.QtCore import QRectF

    from attnviz.figures.fill import MAX_GROWTH, filled_placement

    body = QRectF(0, 0, 1920, 950)
    scale, offset = filled_placement(_Figure(), body, 1.5)
    assert 1.5 * 2.5 >= scale > 1.5 * 2, scale  # 300 px → most of 950 px (capped at MAX_GROWTH)
    assert MAX_GROWTH == 2.5
    side = 200 * scale
    assert abs(offset.x() - (1920 - side) / 2) < 10 and abs(offset.y() - (950 - side) / 2) < 10, (offset, side)


def test_a_full_figure_is_left_as_it_is(qapp):
    """Control: a figure that fills its band keeps its scale and place."""
    from PySide6.QtCore import QRectF

    from attnviz.figures.fill import filled_placement

    scale, offset = filled_placement(_Figure(full=True), QRectF(0, 0, 1920, 950), 1.5)
    assert scale == 1.5 and offset.x() == 0 and offset.y() == 0
