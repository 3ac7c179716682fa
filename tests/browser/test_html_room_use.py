"""The HTML page's all-heads grid and token lines use a browser window of their own (issue 36): a 2 × 4-head model's
grid drew 96-px tiles in the top-left quarter of a 1,920 × 1,080 window, and twelve tokens' lines 600 × 250 px.
Control: inside a notebook's iframe (sized for the layout, html_layout.page_height) both keep the layout's sizes."""

from __future__ import annotations

import pytest

from attnviz.export.html_layout import LAYOUT
from tests.browser.pages import open_in_notebook, open_in_window, sample_page

BOX = ("(() => { const r = document.getElementById('{id}').getBoundingClientRect();"
       " return [r.width, r.height, window.innerWidth, window.innerHeight]; })()")


@pytest.fixture(scope="module")
def pages():
    shape = dict(T=12, n_layers=2, n_heads=4, d_model=64)
    return {"model": sample_page("encoder", "model", **shape), "token-lines": sample_page("encoder", "token-lines", **shape)}


@pytest.mark.parametrize("view,canvas", [("model", "grid"), ("token-lines", "lines")])
def test_a_small_model_fills_a_window(context_with, tmp_path, pages, view, canvas):
    page = open_in_window(context_with, tmp_path / f"{view}.html", pages[view], (1920, 1080))
    width, height, inner_w, inner_h = page.evaluate(BOX.replace("{id}", canvas))
    # the figure spans most of the window one way (a 2 × 4 grid of square tiles is bound by the height)
    assert max(width / inner_w, height / inner_h) >= 0.6, (width, height, inner_w, inner_h)
    assert height <= inner_h, (height, inner_h)  # whole in the window
    assert page.errors == []


def test_in_a_notebook_iframe_the_layout_sizes_stay(context_with, tmp_path, pages):
    grid = open_in_notebook(context_with, tmp_path / "nb-grid.html", pages["model"]).locator("#grid").bounding_box()
    lines = open_in_notebook(context_with, tmp_path / "nb-lines.html", pages["token-lines"]).locator("#lines")
    assert grid["width"] <= LAYOUT["grid_left"] + 4 * (LAYOUT["grid_max"] + 20), grid
    assert lines.bounding_box()["width"] == LAYOUT["lines_width"]
