"""The interactive HTML page in headless Chromium: it paints, switches, hovers exact values, fetches nothing."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from attnviz.analysis.trace_parts import format_value
from attnviz.bench.traces import sample_trace
from attnviz.export.html_data import decoded_values, stored_values
from attnviz.export.html_page import html_page

LUT_NAME = "viridis"


@pytest.fixture(scope="module")
def lut():
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    return colour_lut(export_style(colormap=LUT_NAME))


@pytest.fixture(scope="module")
def trace():
    return sample_trace("decoder", T=10, n_layers=3, n_heads=4, std=0.5)  # peaked, causal: heads differ clearly


def _write(tmp_path, trace, lut, name="page.html", **kw):
    page, meta = html_page(trace, lut, **kw)
    path = tmp_path / name
    path.write_text(page, encoding="utf-8")
    return path, meta


def _canvas(o, cid: str) -> str:
    return o.page.evaluate(f"document.getElementById('{cid}').toDataURL()")


def _hover_cell(o, i: int, j: int):
    x, y = o.page.evaluate(f"window.attnviz.cellCenter({i}, {j})")
    o.page.mouse.move(x, y)
    value = o.page.get_attribute("#status", "data-value")
    return o.status(), None if value is None else float(value)


def _stored(trace, layer, head, precision="fp16"):
    """A map as the page holds it: the stored values decoded, in float32 (the page's Float32Array)."""
    return decoded_values(*stored_values(trace.probs(layer)[head], precision)).astype(np.float32).astype(np.float64)


def test_it_paints_with_the_apps_colours_and_fetches_nothing(open_page, tmp_path, trace, lut):
    path, _ = _write(tmp_path, trace, lut)
    o = open_page(path)
    png = Image.open(io.BytesIO(o.page.locator("#map").screenshot())).convert("RGB")
    colours = {tuple(c) for c in np.asarray(png).reshape(-1, 3)[::7]}
    assert len(colours) > 20  # a map, labels and a colour bar: not a blank canvas
    # the masked colour (LUT 255) and the colour of weight 0 (LUT 0) are both on the causal map
    assert tuple(int(v) for v in lut[255][:3]) in colours and tuple(int(v) for v in lut[0][:3]) in colours
    assert o.requests == [path.as_uri()] and o.errors == []
    assert o.page.inner_text("#title") == "Layer 0 · head 0 · self-attention"


def test_switching_layer_and_head_changes_the_map(open_page, tmp_path, trace, lut):
    o = open_page(_write(tmp_path, trace, lut)[0])
    before = _canvas(o, "map")
    o.page.select_option("#head", "2")
    after_head = _canvas(o, "map")
    o.page.select_option("#layer", "1")
    after_layer = _canvas(o, "map")
    assert len({before, after_head, after_layer}) == 3
    assert o.page.inner_text("#title") == "Layer 1 · head 2 · self-attention"
    o.page.select_option("#head", "0")
    o.page.select_option("#layer", "0")
    assert _canvas(o, "map") == before  # the same selection draws the same pixels
    o.page.select_option("#scale", "per-map")
    assert _canvas(o, "map") != before


@pytest.mark.parametrize("precision", ["fp16", "uint8"])
def test_hovering_a_cell_shows_the_traces_weight(open_page, tmp_path, trace, lut, precision):
    o = open_page(_write(tmp_path, trace, lut, precision=precision, layer=2, head=3)[0])
    truth = _stored(trace, 2, 3, precision)
    assert o.page.inner_text("#precision").startswith(
        "weights stored in this page as " + ("float16" if precision == "fp16" else "8 bits of each row's largest weight"))
    for i, j in [(9, 0), (5, 3), (7, 7)]:
        text, value = _hover_cell(o, i, j)
        assert value == truth[i, j]  # exactly the stored value
        assert text == f"{trace.tokens[i]} [{i}] → {trace.tokens[j]} [{j}]: {format_value(truth[i, j])}"
        row_max = trace.probs(2)[3, i].max()
        assert abs(value - trace.probs(2)[3, i, j]) <= (2.0**-11 if precision == "fp16" else row_max / 510 * 1.0001)
    text, value = _hover_cell(o, 2, 6)
    assert text.endswith("masked (−∞ before softmax)") and value is None


def test_hover_check_fails_on_a_broken_page(open_page, tmp_path, trace, lut):
    # negative control: a page of a trace whose heads were swapped does not show the trace's weights
    from copy import deepcopy

    broken = deepcopy(trace)
    broken.arrays["L2.probs"] = broken.arrays["L2.probs"][::-1].copy()
    o = open_page(_write(tmp_path, broken, lut, layer=2, head=3)[0])
    truth = _stored(trace, 2, 3)
    assert any(_hover_cell(o, i, j)[1] != truth[i, j] for i, j in [(9, 0), (5, 3), (7, 7)])


def test_token_lines_filter_on_hover_and_heads_on_click(open_page, tmp_path, trace, lut):
    o = open_page(_write(tmp_path, trace, lut, view="token-lines", layer=1)[0])
    assert o.page.inner_text("#title").startswith("Layer 1 · all heads · self-attention · line opacity")
    everything = _canvas(o, "lines")
    x, y = o.page.evaluate("window.attnviz.tokenCenter('left', 6)")
    o.page.mouse.move(x, y)
    parts = []
    for h in range(4):
        row = _stored(trace, 1, h)[6]
        j = int(np.argmax(row))
        parts.append(f"H{h}: {trace.tokens[j]} [{j}] {format_value(row[j])}")
    assert o.status() == f"{trace.tokens[6]} [6] → strongest key: " + "; ".join(parts)
    assert _canvas(o, "lines") != everything  # only token 6's lines
    o.page.mouse.move(1, 1)
    assert _canvas(o, "lines") == everything
    o.page.click("#heads button >> nth=0")  # hide head 0
    assert "heads 1, 2, 3" in o.page.inner_text("#title") and _canvas(o, "lines") != everything
    o.page.click("#all-heads")
    assert _canvas(o, "lines") == everything


def test_all_heads_grid_opens_a_head(open_page, tmp_path, trace, lut):
    o = open_page(_write(tmp_path, trace, lut, view="model")[0])
    assert o.page.inner_text("#title").startswith("All heads · self-attention")
    x, y = o.page.evaluate("window.attnviz.thumbCenter(2, 1)")
    o.page.mouse.move(x, y)
    assert o.status() == f"Layer 2 · head 1: largest weight {trace.probs(2)[1].max():.4f}"
    o.page.mouse.click(x, y)
    assert o.page.evaluate("[window.attnviz.view, window.attnviz.layer, window.attnviz.head]") == ["head-map", 2, 1]
    assert o.page.inner_text("#title") == "Layer 2 · head 1 · self-attention"
    assert o.requests == [o.page.url]


def test_the_cli_page_and_the_notice_of_a_cut_input(open_page, tmp_path, lut):
    from attnviz.bench.traces import synthetic_trace

    big = synthetic_trace(T=64, n_layers=6, n_heads=4)
    o = open_page(_write(tmp_path, big, lut, precision="uint8", max_bytes=3 * (5 * 64 * 64 + 4 * 4 * 64))[0])
    assert o.page.is_visible("#notice") and o.page.inner_text("#notice").startswith("showing layers 0–2 of 6")
    assert o.page.locator("#layer option").count() == 3


def test_the_notebook_iframe_runs_offline(browser, tmp_path, trace):
    from attnviz.api.html_figure import HtmlFigure

    fig = HtmlFigure(trace, view="head-map", layer=1, head=1)
    host = tmp_path / "notebook_output.html"
    host.write_text(f"<!doctype html><html><body>{fig._repr_html_()}</body></html>", encoding="utf-8")
    page, requests = browser.new_page(), []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(host.as_uri())
    frame = page.frame_locator("iframe")
    frame.locator("body[data-ready='1']").wait_for(timeout=30000)
    assert frame.locator("#title").inner_text() == "Layer 1 · head 1 · self-attention"
    assert requests == [host.as_uri()]  # the srcdoc frame fetched nothing either
    page.close()


def test_encoder_decoder_parts_switch(open_page, tmp_path, lut):
    trace = sample_trace("encoder-decoder", T=7, n_layers=2, n_heads=2, std=0.5)
    o = open_page(_write(tmp_path, trace, lut, part="enc")[0])
    assert o.page.inner_text("#title") == "Layer 0 · head 0 · encoder self-attention"
    o.page.select_option("#part", label="cross-attention (decoder → encoder)")
    assert o.page.inner_text("#title") == "Layer 0 · head 0 · cross-attention (decoder → encoder)"
    text, value = _hover_cell(o, 1, 4)
    truth = decoded_values(*stored_values(trace.probs(0, "cross")[0], "fp16")).astype(np.float32)
    assert value == float(truth[1, 4]) and f"→ {trace.src_tokens[4]} [4]:" in text


def test_all_heads_hover_and_notes_say_what_the_apps_model_view_says(open_page, tmp_path, trace, lut, qapp):
    from attnviz.figures.registry import make_figure
    from attnviz.gui.views.model_summary import summarize_stats
    from attnviz.selection import SelectionState

    view, _selection = make_figure("model", trace, SelectionState())
    try:
        view.ensure_current()
        app_hover, app_note = view.head_info(2, 1), view.note_text(2, 1)
    finally:
        import shiboken6

        view.close()
        shiboken6.delete(view)  # now: a closed top-level left alive made later window tests count leaked popups
    assert "entropy" in app_hover and "mean distance" in app_hover  # the app's statistics were there to compare
    o = open_page(_write(tmp_path, trace, lut, view="model", head_stats=summarize_stats)[0])
    x, y = o.page.evaluate("window.attnviz.thumbCenter(2, 1)")
    o.page.mouse.move(x, y)
    assert o.status() == app_hover
    assert o.page.evaluate("(() => { const E = window.attnviz.meta.parts[0].layers[2];"
                           " return E.entropy[1].toFixed(2) + ' · ' + E.distance[1].toFixed(1); })()") == app_note
    assert "under each: entropy (nats) · mean attention distance (tokens)" in o.page.inner_text("#title")


def test_a_hostile_token_is_shown_as_text(open_page, tmp_path, lut):
    trace = sample_trace("encoder", T=6)
    trace.tokens[2] = "</script><script>alert(1)</script>"
    o = open_page(_write(tmp_path, trace, lut)[0])
    dialogs = []
    o.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    text, _ = _hover_cell(o, 2, 0)
    assert text.startswith("</script><script>alert(1)</script> [2] → ")
    assert dialogs == [] and o.page.evaluate("document.scripts.length") == 3
