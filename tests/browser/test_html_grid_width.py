"""The HTML page's all-heads grid uses the browser window's width (issue 36): a 32 × 32-head model's page drew ~11
heads a page in ~45 % of a 1,920-wide window. At 1,920 × 1,080 and 1,280 × 720 the grid now spans most of the window
without a horizontal scroll bar, its tiles still at least ``grid_min_notes`` px. Control: inside a notebook's iframe
(sized for the layout's ``grid_width``, html_layout.page_height) the grid keeps that width."""

from __future__ import annotations

import pytest

from attnviz.export.html_layout import LAYOUT
from tests.browser.pages import open_in_notebook, open_in_window, sample_page

GRID = ("(() => { const r = document.getElementById('grid').getBoundingClientRect();"
        " return [r.width, window.innerWidth, document.documentElement.scrollWidth, r.bottom, window.innerHeight]; })()")


@pytest.fixture(scope="module")
def page_32x32():
    return sample_page("decoder", "model", T=6, n_layers=32, n_heads=32, d_model=64, std=0.5)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_grid_uses_the_window_width(context_with, tmp_path, page_32x32, size):
    page = open_in_window(context_with, tmp_path / "grid.html", page_32x32, size)
    width, inner, scroll, bottom, inner_h = page.evaluate(GRID)
    assert width >= 0.85 * inner, (width, inner)  # was ~45 % at 1,920
    assert scroll <= inner, (scroll, inner)  # and no wider than the window
    assert bottom <= inner_h, (bottom, inner_h)  # its page of layers whole in the window (720 lines cut L31)
    pitch = page.evaluate("(() => { const a = window.attnviz.thumbCenter(0, 0), b = window.attnviz.thumbCenter(0, 1);"
                          " return b[0] - a[0]; })()")
    assert pitch >= LAYOUT["grid_min"] + 6, pitch  # tiles not shrunk to fill it (44 px and their gap at least)
    assert page.errors == []


def test_in_a_notebook_iframe_the_grid_keeps_the_layout_width(context_with, tmp_path, page_32x32):
    frame = open_in_notebook(context_with, tmp_path / "notebook.html", page_32x32)
    width = frame.locator("#grid").bounding_box()["width"]
    assert width <= LAYOUT["grid_left"] + LAYOUT["grid_width"], width
