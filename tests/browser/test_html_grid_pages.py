"""The HTML page's all-heads grid at real model sizes (issue 36, Deliver 5): 30 layers × 9 heads and 32 × 32
page rather than shrink. Tiles stay at least ``grid_min_notes`` px with their 12 px numbers, the canvas
stays within the layout's width, ▲▼◀▶ and the arrow keys turn pages, and a head on another page opens."""

from __future__ import annotations

import re

import pytest

from attnviz.bench.traces import sample_trace
from attnviz.export.html_layout import LAYOUT, grid_page
from attnviz.export.html_page import html_page


@pytest.fixture(scope="module")
def lut():
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    return colour_lut(export_style(colormap="viridis"))


def _open(open_page, tmp_path, lut, layers, heads):
    trace = sample_trace("decoder", T=6, n_layers=layers, n_heads=heads, d_model=heads * 2, std=0.5)
    page, meta = html_page(trace, lut, view="model")
    path = tmp_path / f"grid{layers}x{heads}.html"
    path.write_text(page, encoding="utf-8")
    notes = "entropy" in meta["parts"][0]["layers"][0]  # the numbers under each tile (left out of some pages)
    return open_page(path), grid_page(layers, heads, notes)


def _grid_css(o):
    return o.page.evaluate("(() => { const r = document.getElementById('grid').getBoundingClientRect();"
                           " return [r.width, r.height]; })()")


@pytest.mark.parametrize("layers, heads", [(30, 9), (32, 32)])
def test_a_large_model_pages_rather_than_shrinks(open_page, tmp_path, lut, layers, heads):
    o, g = _open(open_page, tmp_path, lut, layers, heads)
    assert g["size"] >= (LAYOUT["grid_min_notes"] if g["gap"] > 6 else LAYOUT["grid_min"]) >= 44
    assert LAYOUT["grid_note_px"] >= 12
    assert g["layers_per_page"] < layers  # (30 × 9 and 32 × 32 do not fit one page)
    w, h = _grid_css(o)
    # within the window it opens in (the grid takes the window's room: test_html_grid_width)
    assert w <= o.page.evaluate("window.innerWidth") and h <= o.page.evaluate("window.innerHeight")
    assert o.page.is_visible("#grid-pages")
    title = o.page.inner_text("#title")
    assert "page: layers 0–" in title  # as many a page as the window holds (test_html_grid_width)
    last = layers - 1
    assert o.page.evaluate(f"window.attnviz.thumbCenter({last}, 0)") is None  # not on the first page
    before = o.page.evaluate("document.getElementById('grid').toDataURL()")
    while o.page.evaluate(f"window.attnviz.thumbCenter({last}, 0)") is None:
        assert not o.page.is_disabled("#grid-down")
        o.page.click("#grid-down")
    assert o.page.evaluate("document.getElementById('grid').toDataURL()") != before
    assert o.page.is_disabled("#grid-down") and not o.page.is_disabled("#grid-up")
    x, y = o.page.evaluate(f"window.attnviz.thumbCenter({last}, 0)")
    o.page.mouse.click(x, y)
    assert o.page.evaluate("[window.attnviz.view, window.attnviz.layer, window.attnviz.head]") == ["head-map", last, 0]
    assert o.errors == []


def test_the_arrow_keys_turn_the_page_with_the_selection(open_page, tmp_path, lut):
    o, g = _open(open_page, tmp_path, lut, 4, 32)
    # a page as wide as the window holds (test_html_grid_width), named in the title
    hp = int(re.search(r"heads 0–(\d+)", o.page.inner_text("#title")).group(1)) + 1
    assert g["heads_per_page"] <= hp < 32
    o.page.focus("#grid")
    for _ in range(hp):
        o.page.keyboard.press("ArrowRight")
    assert o.page.evaluate("window.attnviz.head") == hp
    # the next page (fixed pages: it starts at head hp): the selection on it, head 0 not
    assert f"heads {hp}–" in o.page.inner_text("#title")
    assert o.page.evaluate(f"window.attnviz.thumbCenter(0, {hp})") is not None
    assert o.page.evaluate("window.attnviz.thumbCenter(0, 0)") is None


def test_a_small_model_is_one_page_without_buttons(open_page, tmp_path, lut):
    """The control: a 3 × 4 model shows every head at once, no pager."""
    o, _ = _open(open_page, tmp_path, lut, 3, 4)
    assert not o.page.is_visible("#grid-pages") and "page:" not in o.page.inner_text("#title")
    assert o.page.evaluate("window.attnviz.thumbCenter(2, 3)") is not None


def test_pages_are_fixed_as_the_apps(open_page, tmp_path, lut):
    """The page's last page ended full at the last head (32 heads by 10: H22–H31, overlapping H20–H29) while the
    app's All heads pages are fixed (all_heads_pages.page_ranges): head k on page k // per page."""
    o, _ = _open(open_page, tmp_path, lut, 4, 32)
    hp = int(re.search(r"heads 0–(\d+)", o.page.inner_text("#title")).group(1)) + 1
    assert 32 % hp, f"{hp} a page divides 32: the page size does not test the last page"
    o.page.focus("#grid")
    for _ in range(31):
        o.page.keyboard.press("ArrowRight")
    start = int(re.search(r"heads (\d+)–31", o.page.inner_text("#title")).group(1))
    assert start == 31 // hp * hp, (start, hp)  # the last page holds what is left
    assert o.errors == []


def test_a_deep_model_in_a_large_window_fills_it_with_balanced_pages(context_with, tmp_path, lut):
    """30 × 9 heads in a 1,920 × 1,080 window: the page drew 64-px tiles sized for all 30 layers in the window's
    top-left 42 %, nine layers a page, so the selected layer 29 opened on a page of three (L27–L29). Now the tiles
    take the width (at least six layers a page) and the pages are balanced; control: the 1,280 × 720 window's
    tiles are smaller, and both still page."""
    from tests.browser.conftest import Opened

    trace = sample_trace("decoder", T=6, n_layers=30, n_heads=9, d_model=18, std=0.5)
    page, _ = html_page(trace, lut, view="model")
    path = tmp_path / "deep.html"
    path.write_text(page, encoding="utf-8")
    seen = {}
    for w, h in ((1920, 1080), (1280, 720)):
        o = Opened(context_with(viewport={"width": w, "height": h}), path.as_uri())
        o.page.evaluate("(() => { window.attnviz.layer; })()")
        title = o.page.inner_text("#title")
        spans = []
        o.page.focus("#grid")
        while True:
            m = re.search(r"page: layers (\d+)–(\d+)", o.page.inner_text("#title"))
            spans.append(int(m.group(2)) - int(m.group(1)) + 1)
            if int(m.group(2)) == 29:
                break
            o.page.click("#grid-down")
        assert "page:" in title and len(spans) > 1
        assert max(spans) - min(spans) <= 1 or min(spans) >= max(spans) * 0.7, spans  # balanced, no page of 3
        assert min(spans) >= 5, spans
        gw, _ = _grid_css(o)
        seen[w] = (gw, spans)
        assert o.errors == []
    assert seen[1920][0] >= 0.6 * 1920, seen  # the grid uses the large window's width
    assert seen[1280][0] < seen[1920][0]
