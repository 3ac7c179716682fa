"""The shipped docs notebook as nbconvert's HTML: with scripts off every figure is a picture, the
interactive output its still picture (the iframe's <noscript>); with scripts on, the live page."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "attnviz_in_a_notebook.ipynb"


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    nbconvert = pytest.importorskip("nbconvert", reason="the test extra installs nbconvert")
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(NOTEBOOK, as_version=4))
    path = tmp_path_factory.mktemp("nbconvert") / "notebook.html"
    path.write_text(body, encoding="utf-8")
    return path


def test_without_scripts_every_figure_is_a_picture(context_with, converted):
    page = context_with(scripts=False).new_page()
    page.goto(converted.as_uri())
    images = page.locator(".jp-OutputArea-output img")  # nbconvert shows an SVG output as an <img> too
    assert images.count() == 3 and all(images.nth(i).is_visible() for i in range(3))
    assert page.locator(".jp-OutputArea-output img[src^='data:image/svg+xml']").count() == 1  # asked as SVG
    frame = page.frame_locator("iframe")
    frame.locator("body").wait_for()
    assert frame.locator(".noscript").is_visible() and frame.locator("img.noscript-figure").is_visible()
    assert not frame.locator("#app").is_visible()  # no empty menus
    box = frame.locator("img.noscript-figure").bounding_box()
    assert box["width"] > 400 and box["height"] > 200


def test_with_scripts_the_interactive_page_runs(context_with, converted):
    # negative control of the above: the same file with scripts shows the live page, not the still one
    page = context_with().new_page()
    page.goto(converted.as_uri())
    frame = page.frame_locator("iframe")
    frame.locator("body[data-ready='1']").wait_for(timeout=30000)
    assert frame.locator("#app").is_visible() and not frame.locator(".noscript").is_visible()
    assert frame.locator("#title").inner_text() == "Layer 1 · head 0 · self-attention"
