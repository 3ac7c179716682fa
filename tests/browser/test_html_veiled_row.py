"""The HTML head map washes out the row that wrote nothing, as the app does (issue 36, finding 3): translate's
cross-attention "(end): nothing written" row was drawn at full colour, an alignment that is not one. Control: the
decoder's self-attention has no such row, and the [EOS] row above it keeps its colours."""

from __future__ import annotations

import pytest

from tests.browser.pages import open_in_window

ROW_MEAN = ("(i => { const g = window.attnviz.geometry(), cv = document.getElementById('map'), d = window.devicePixelRatio;"
            " const ctx = cv.getContext('2d'), y = Math.round((g.top + (i + 0.5) * g.cell) * d);"
            " const px = ctx.getImageData(Math.round(g.left * d), y, Math.round(g.dk * g.cell * d), 1).data;"
            " let s = 0; for (let k = 0; k < px.length; k += 4) s += (px[k] + px[k + 1] + px[k + 2]) / 3;"
            " return s / (px.length / 4); })")


@pytest.fixture(scope="module")
def translate():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("translate", device="cpu"), text="the big dog sees a small cat")


def _page(trace, part: str):
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    return html_page(trace, colour_lut(export_style()), view="head-map", layer=1, head=0, part=part)


def test_only_the_cross_attention_end_row_is_veiled(translate):
    _text, meta = _page(translate, "cross")
    parts = {P["part"]: P.get("veiled") for P in meta["parts"]}
    assert parts["cross"] == len(translate.tokens) - 1, parts
    assert parts["self"] is None and parts.get("enc") is None, parts


def test_the_end_row_is_drawn_washed_out(context_with, tmp_path, translate):
    text, _meta = _page(translate, "cross")
    page = open_in_window(context_with, tmp_path / "tr.html", text, (1280, 720))
    last = len(translate.tokens) - 1
    end, eos = page.evaluate(f"{ROW_MEAN}({last})"), page.evaluate(f"{ROW_MEAN}({last - 1})")
    assert end > 180 and eos < 120, (end, eos)  # washed towards the white page; [EOS]'s row dark (viridis)
    assert page.errors == []


def test_a_long_label_is_cut_with_an_ellipsis_and_the_end_row_keeps_its_name(context_with, tmp_path, translate):
    """The page cut every label at 14 characters with no mark: the end row read "(end): nothing" (a sentence cut
    mid-way) and a long token lost its tail silently."""
    text, meta = _page(translate, "cross")
    page = open_in_window(context_with, tmp_path / "cut.html", text, (1280, 720))
    end = meta["parts"][[P["part"] for P in meta["parts"]].index("cross")]["queries"][-1]
    assert end == "(end): nothing written"
    assert page.evaluate(f"window.attnviz.axisLabel({end!r})") == "(end)"
    assert page.evaluate("window.attnviz.axisLabel('internationalisation')") == "international…"
    assert page.evaluate("window.attnviz.axisLabel('vidas')") == "vidas"  # control: a short label is whole
