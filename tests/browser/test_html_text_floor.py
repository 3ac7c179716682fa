"""The HTML page draws no canvas text under 12 px at 100 % zoom (issue 36): on a 1,280 × 720 window a 70-token input's
head map labelled its rows at 7 px (the font followed the cell, down to 6 px) and token lines at 7 px (down to
``lines_min`` - 2). Labels now keep 12 px and name every k-th row where rows are closer than that, as the app does.
Every ``fillText`` of the page is recorded with its font; control: a 6 px text drawn by the test is caught."""

from __future__ import annotations

import pytest

from tests.browser.pages import open_in_window, sample_page

MIN_PX = 12.0
RECORD = """
window.__texts = [];
const fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
  window.__texts.push([String(text), parseFloat(this.font)]);
  return fill.call(this, text, ...rest);
};
"""


@pytest.fixture(scope="module")
def long_page():
    return sample_page("decoder", "head-map", T=70, n_layers=2, n_heads=4, d_model=32, std=0.5)


def _drawn(context_with, tmp_path, page_text, size, view):
    page = open_in_window(context_with, tmp_path / "page.html", page_text, size, RECORD)
    page.evaluate("window.__texts = []")
    page.evaluate(f"window.attnviz.set({{view: '{view}'}})")
    texts = page.evaluate("window.__texts")
    assert page.errors == []
    return page, texts


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
@pytest.mark.parametrize("view", ["head-map", "token-lines", "model"])
def test_no_canvas_text_under_12_px(context_with, tmp_path, long_page, size, view):
    _page, texts = _drawn(context_with, tmp_path, long_page, size, view)
    assert len(texts) >= (4 if view == "model" else 20), texts  # the view's labels were drawn (and recorded)
    small = sorted({(px, t) for t, px in texts if px < MIN_PX})
    assert not small, small[:8]


def test_a_small_text_is_caught(context_with, tmp_path, long_page):
    """Control: the recorder sees a 6 px text drawn on the page's canvas."""
    page, _texts = _drawn(context_with, tmp_path, long_page, (1280, 720), "head-map")
    page.evaluate("(() => { const c = document.getElementById('map').getContext('2d');"
                  " c.font = '6px sans-serif'; c.fillText('tiny', 0, 0); })()")
    texts = page.evaluate("window.__texts")
    assert [px for t, px in texts if t == "tiny"] == [6.0]
