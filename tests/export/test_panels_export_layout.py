"""Matrices side by side in an exported figure (PanelsView) are drawn at one size with colour bars as tall as they
are, and the deck's patch-filter page uses its width.

`attnviz export --model induction --view causal-mask` drew its three 21 × 21 maps 217, 222 and 254 px wide (each
map sized its square cells from its own grid column, and the columns differ by their bars' and labels' widths) with
colour bars three times their height in the top half of the slide; the deck's word-order page (12) drew 2-row maps
beside bars five times their height, and its patch-filter page (14) kept seven tiles a row, four rows bound by the
height, on ~40 % of the page's width; its rollout page (15) drew four pictures two by two on half the width.
Measured in the pixels of the written files."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from tests.export.test_deck_fill import MASK_MAPS, FILLED, _scene_pdf, band_fill, longest_runs, map_widths  # noqa: E402

SAT = 40  # a coloured (viridis) pixel: its channels differ by more than this; text, hatch and paper are grey


def tallest_runs(rgb: np.ndarray, parts: int = MASK_MAPS) -> list[int]:
    """The longest vertical run of coloured pixels in each slice of the page (a half: the mask's S + M and P, M
    folded): a map's height (its first column has no masked cell) or its colour bar's, whichever is taller."""
    return longest_runs(rgb, vertical=True, parts=parts)


@pytest.fixture(scope="module")
def mask_png(tmp_path_factory):
    from attnviz.export.batch import export_one
    from attnviz.export.headless import ensure_app
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    ensure_app()
    trace = run_trace(load_model("induction", device="cpu"), text="blackhorseblackhorse")
    out = tmp_path_factory.mktemp("panels") / "mask.png"
    export_one("causal-mask", trace, SelectionState(layer=1, head=0), out, ExportOptions(), export_style())
    return np.asarray(Image.open(out).convert("RGB")).astype(int)


def test_the_maps_of_the_mask_are_one_size(mask_png):
    widths = map_widths(mask_png, MASK_MAPS)
    assert min(widths) > mask_png.shape[1] * 0.2, widths  # both maps found, not text or bars
    assert max(widths) <= min(widths) * 1.03, widths


def test_colour_bars_are_as_tall_as_their_maps(mask_png):
    widths, tallest = map_widths(mask_png, MASK_MAPS), tallest_runs(mask_png)
    assert all(t <= w * 1.1 for t, w in zip(tallest, widths)), (tallest, widths)


def test_the_maps_sit_in_the_middle_of_the_figure(mask_png):
    """The maps are centred between the title and the notes, not along the top with the bottom half empty (the
    first third: S + M's cells, left of its colour bar)."""
    sat = (mask_png.max(axis=2) - mask_png.min(axis=2) > SAT)[:, :mask_png.shape[1] // 3]
    rows = np.flatnonzero(sat.any(axis=1))
    middle = (rows[0] + rows[-1]) / 2 / mask_png.shape[0]
    assert 0.4 < middle < 0.6, middle


def test_a_tall_bar_is_caught(mask_png):
    """Control: a colour bar three times a map's height, painted into the page, fails the bar measure."""
    page = mask_png.copy()
    w = map_widths(page, MASK_MAPS)[1]
    x = page.shape[1] // 2 + 5
    page[20:20 + min(3 * w, page.shape[0] - 40), x:x + 8] = (68, 1, 84)  # viridis' darkest colour
    assert any(t > m * 1.1 for t, m in zip(tallest_runs(page), map_widths(page, MASK_MAPS)))


def test_patch_filter_page_uses_its_width(qapp, tmp_path):
    width, height = band_fill(_scene_pdf(tmp_path, "filters-pca"))
    assert width >= FILLED, (width, height)


def test_rollout_page_uses_its_width(qapp, tmp_path):
    """Deck page 15: two by two, bound by the page's height, the four pictures used half its width (225 px on a
    720-line page). Now the input stands large beside the three maps (rollout_arrangement): the band spans most of
    the width and nearly all the height (84 % × 94 % measured), so the span is held with the height, not alone."""
    width, height = band_fill(_scene_pdf(tmp_path, "rollout"))
    assert width >= 0.8 and width * height >= 0.75, (width, height)


def test_position_similarity_bar_sits_beside_its_matrix(qapp, tmp_path):
    """The square map's spare width went between the matrix and its colour bar (~480 px on a 1920 slide, the pack's
    pos-similarity figure): the bar is now beside it. Measured as the widest run of columns without colour between
    the map's first coloured column and the bar's last (the map's own grey separators are ~50 px)."""
    from attnviz.export.batch import export_one
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    trace = run_trace(load_model("shapes", device="cpu"), image=str(Path(__file__).resolve().parents[2] / "assets" / "samples" / "shapes-star.png"))
    out = tmp_path / "ps.png"
    export_one("pos-similarity", trace, SelectionState(), out, ExportOptions(), export_style())
    rgb = np.asarray(Image.open(out).convert("RGB")).astype(int)
    coloured = np.flatnonzero((rgb.max(axis=2) - rgb.min(axis=2) > SAT).any(axis=0))
    widest_gap = int(np.diff(coloured).max()) - 1
    assert widest_gap < 0.06 * rgb.shape[1], (widest_gap, rgb.shape)
