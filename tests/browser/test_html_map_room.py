"""A short input's head map takes the browser window's room (issue 36: "every pixel"): coref's 12 tokens drew a
360 px map in a 1,920 × 1,080 window, two thirds of the window empty; only a long input's map grew. Now any map
in a window of its own is as large as the window lets it be (never smaller than html_layout.map_side), whole in
the window. Control: inside a notebook's iframe, sized for html_layout.map_side, the map keeps that side."""

from __future__ import annotations

import pytest

from attnviz.export.html_layout import LAYOUT, map_side
from tests.browser.pages import open_in_notebook, open_in_window, sample_page

T = 12
ROOM = ("(() => { const r = document.getElementById('map').getBoundingClientRect();"
        " return [r.left + window.scrollX, r.top + window.scrollY, r.bottom, window.innerHeight]; })()")


@pytest.fixture(scope="module")
def short_page():
    return sample_page("decoder", "head-map", T=T, n_layers=2, n_heads=2, d_model=16, std=0.5)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_a_short_map_takes_the_window_room(context_with, tmp_path, short_page, size):
    page = open_in_window(context_with, tmp_path / "short.html", short_page, size)
    G = page.evaluate("window.attnviz.geometry()")
    side = G["cell"] * max(G["dq"], G["dk"])
    left, top, bottom, inner_h = page.evaluate(ROOM)
    room = min(size[0] - left - LAYOUT["map_left"] - LAYOUT["map_right"] - 24,
               size[1] - top - LAYOUT["map_top"] - LAYOUT["map_bottom"])
    assert room > map_side(T, T)  # the window has more room than the map had (else this test shows nothing)
    assert room - 2 < side <= room, (side, room)  # was map_side: 360 px at both sizes
    assert bottom <= inner_h, (bottom, inner_h)  # and the whole map (with its column labels) in the window
    assert page.errors == []


def test_in_a_notebook_iframe_the_map_keeps_its_side(context_with, tmp_path, short_page):
    frame = open_in_notebook(context_with, tmp_path / "notebook.html", short_page)
    box = frame.locator("#map").bounding_box()
    expected = LAYOUT["map_top"] + map_side(T, T) + LAYOUT["map_bottom"]
    assert box["height"] == pytest.approx(expected, abs=2), (box, expected)
