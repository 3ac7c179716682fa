"""The HTML page's all-heads grid uses the browser window's width (issue 36): a 32 × 32-head model's page drew ~11
heads a page in ~45 % of a 1,920-wide window. At 1,920 × 1,080 and 1,280 × 720 the grid now spans most of the window
without a horizontal scroll bar, its tiles still at least ``grid_min_notes`` px. Control: inside a notebook's iframe
(sized for the layout's ``grid_width``, html_layout.page_height) the grid keeps that width."""

from __future__ import annotations

import pytest

from attnviz.bench.traces import sample_trace
from attnviz.export.html_layout import LAYOUT
from attnviz.export.html_page import html_page, iframe_srcdoc

GRID = ("(() => { const r = document.getElementById('grid').getBoundingClientRect();"
        " return [r.width, window.innerWidth, document.documentElement.scrollWidth, r.bottom, window.innerHeight]; })()")


@pytest.fixture(scope="module")
def page_32x32():
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    trace = sample_trace("decoder", T=6, n_layers=32, n_heads=32, d_model=64, std=0.5)
    page, meta = html_page(trace, colour_lut(export_style(colormap="viridis")), view="model")
    return page


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_grid_uses_the_window_width(context_with, tmp_path, page_32x32, size):
    path = tmp_path / "grid.html"
    path.write_text(page_32x32, encoding="utf-8")
    page = context_with(viewport={"width": size[0], "height": size[1]}).new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=30000)
    width, inner, scroll, bottom, inner_h = page.evaluate(GRID)
    assert width >= 0.85 * inner, (width, inner)  # was ~45 % at 1,920
    assert scroll <= inner, (scroll, inner)  # and no wider than the window
    assert bottom <= inner_h, (bottom, inner_h)  # its page of layers whole in the window (720 lines cut L31)
    pitch = page.evaluate("(() => { const a = window.attnviz.thumbCenter(0, 0), b = window.attnviz.thumbCenter(0, 1);"
                          " return b[0] - a[0]; })()")
    assert pitch >= LAYOUT["grid_min"] + 6, pitch  # tiles not shrunk to fill it (44 px and their gap at least)
    assert errors == []


def test_in_a_notebook_iframe_the_grid_keeps_the_layout_width(context_with, tmp_path, page_32x32):
    path = tmp_path / "notebook.html"
    path.write_text(f"<!doctype html><html><body>{iframe_srcdoc(page_32x32, 900)}</body></html>", encoding="utf-8")
    page = context_with(viewport={"width": 1920, "height": 1080}).new_page()
    page.goto(path.as_uri())
    frame = page.frame_locator("iframe")
    frame.locator("body[data-ready='1']").wait_for(timeout=30000)
    width = frame.locator("#grid").bounding_box()["width"]
    assert width <= LAYOUT["grid_left"] + LAYOUT["grid_width"], width
