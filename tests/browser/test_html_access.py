"""The interactive page in Chromium beyond the mouse: scripts off, keyboard, pixel density, long inputs,
byte-level tokens, controls only where they act, a vision input's picture, the notebook iframe's height."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from attnviz.bench.traces import sample_trace
from attnviz.export.html_data import error_bound
from attnviz.export.html_page import html_page, iframe_srcdoc
from tests.export.long_maps import ColumnTrace, near_uniform_causal


@pytest.fixture(scope="module")
def lut():
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    return colour_lut(export_style(colormap="viridis"))


@pytest.fixture(scope="module")
def trace():
    return sample_trace("decoder", T=10, n_layers=3, n_heads=4, std=0.5)


def _write(tmp_path, trace, lut, name="page.html", still=False, **kw):
    fallback = None
    if still:
        from attnviz.export.html_fallback import fallback_picture
        from attnviz.figures.registry import export_style
        from attnviz.selection import SelectionState

        state = SelectionState(layer=kw.get("layer", 0), head=kw.get("head", 0))
        fallback = lambda m: fallback_picture(trace, state, export_style(colormap="viridis"), m)  # noqa: E731
    page, meta = html_page(trace, lut, fallback=fallback, **kw)
    path = tmp_path / name
    path.write_text(page, encoding="utf-8")
    return path, meta


def _open(ctx, path):
    page = ctx.new_page()
    page.goto(path.as_uri())
    page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=60000)
    return page


def test_scripts_off_show_the_still_picture_and_one_line(context_with, tmp_path, trace, lut, qapp):
    path, meta = _write(tmp_path, trace, lut, still=True, layer=1, head=2)
    assert meta["fallback_png"].startswith(b"\x89PNG")
    page = context_with(scripts=False).new_page()
    page.goto(path.as_uri())
    line = page.locator(".noscript")
    assert line.is_visible() and line.inner_text().startswith("Scripts cannot run here, so this is a still picture")
    img = page.locator("img.noscript-figure")
    assert img.is_visible() and img.get_attribute("alt").startswith("attnviz figure: head map of layer 1, head 2")
    shot = np.asarray(Image.open(io.BytesIO(img.screenshot())).convert("RGB"))
    assert shot.shape[1] == 960 and len({tuple(c) for c in shot.reshape(-1, 3)[::13]}) > 20  # a figure, not blank
    assert not page.locator("#app").is_visible() and not page.locator("nav").is_visible()  # no empty menus
    # negative control: with scripts on the same file shows the page's controls, not the picture
    live = _open(context_with(), path)
    assert live.locator("#app").is_visible() and not live.locator(".noscript").is_visible()
    assert not live.locator("img").count()  # <noscript> content is not even parsed as elements


def test_a_sandbox_without_scripts_shows_the_picture(context_with, tmp_path, trace, lut, qapp):
    page_text = _write(tmp_path, trace, lut, still=True)[0].read_text(encoding="utf-8")
    host = tmp_path / "host.html"
    frame = iframe_srcdoc(page_text, 900)
    host.write_text(f"<!doctype html><body>{frame.replace(chr(39) + 'allow-scripts' + chr(39), chr(39) + chr(39))}</body>",
                    encoding="utf-8")
    assert "sandbox=''" in host.read_text(encoding="utf-8")
    page = context_with().new_page()
    page.goto(host.as_uri())
    inner = page.frame_locator("iframe")
    assert inner.locator(".noscript").is_visible() and inner.locator("img.noscript-figure").is_visible()
    assert not inner.locator("#app").is_visible()


def _tab_walk(page, presses=40) -> list[str]:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    seen = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("(() => { const e = document.activeElement;"
                                  " return e.id || e.textContent.trim() || e.tagName; })()"))
    return seen


def test_the_keyboard_reaches_every_control(context_with, tmp_path, trace, lut):
    page = _open(context_with(), _write(tmp_path, trace, lut)[0])
    reached = set(_tab_walk(page))
    assert {"tab-head-map", "tab-model", "tab-token-lines", "layer", "head", "scale", "map"} <= reached
    focus = page.evaluate("(() => { document.getElementById('map').focus();"
                          " const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]; })()")
    assert focus == ["solid", "3px"]  # a visible focus ring
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("[window.attnviz.layer, window.attnviz.head]") == [1, 1]
    assert page.inner_text("#title") == "Layer 1 · head 1 · self-attention"
    page.keyboard.press("Shift+ArrowDown")  # the cell cursor reads a weight out
    assert page.inner_text("#status").startswith(f"{trace.tokens[1]} [1] → {trace.tokens[0]} [0]: ")
    page.focus("#tab-token-lines")
    page.keyboard.press("Enter")
    assert page.evaluate("window.attnviz.view") == "token-lines"
    reached = set(_tab_walk(page))
    assert {"H0", "H1", "H2", "H3", "all-heads", "lines", "layer"} <= reached and "scale" not in reached
    page.focus("#tab-model")
    page.keyboard.press("Enter")
    page.focus("#grid")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # opens the selected head
    assert page.evaluate("[window.attnviz.view, window.attnviz.layer, window.attnviz.head]") == ["head-map", 2, 1]
    # negative control: a canvas taken out of the tab order is not reached
    page.evaluate("document.getElementById('map').tabIndex = -1")
    assert "map" not in _tab_walk(page)


def test_canvases_are_labelled_for_screen_readers(context_with, tmp_path, trace, lut):
    page = _open(context_with(), _write(tmp_path, trace, lut)[0])
    label = page.get_attribute("#map", "aria-label")
    assert label.startswith("Head map of layer 0, head 0, self-attention: 10 queries by 10 keys")
    assert page.get_attribute("#map", "role") == "img" and page.get_attribute("#status", "aria-live") == "polite"
    page.select_option("#head", "3")
    assert page.get_attribute("#map", "aria-label").startswith("Head map of layer 0, head 3")


@pytest.mark.parametrize("dpr", [1, 2])
def test_canvas_backing_store_follows_the_pixel_ratio(context_with, tmp_path, trace, lut, dpr):
    page = _open(context_with(device_scale_factor=dpr), _write(tmp_path, trace, lut)[0])
    for view, canvas in [("head-map", "map"), ("model", "grid"), ("token-lines", "lines")]:
        page.evaluate(f"window.attnviz.set({{view: '{view}'}})")
        w, css = page.evaluate(f"[document.getElementById('{canvas}').width, document.getElementById('{canvas}').clientWidth]")
        assert w == css * dpr  # dpr 2: twice the pixels of the CSS size (dpr 1 is the negative control)


COLUMNS = [1, 499, 1234, 1801, 2222, 2503, 2998, 2999]


@pytest.mark.parametrize("T,dpr", [(1500, 1), (3000, 1), (3000, 2)])
def test_a_long_maps_columns_of_ones_are_drawn(context_with, tmp_path, lut, T, dpr):
    columns = [c * T // 3000 for c in COLUMNS]
    trace = ColumnTrace(T, n_layers=1 if T == 1500 else 2, columns=columns)  # 1,500: every weight stored
    page = _open(context_with(device_scale_factor=dpr), _write(tmp_path, trace, lut, max_bytes=20 * 2**20)[0])
    one, zero = [list(map(int, lut[i][:3])) for i in (254, 0)]
    for h, c in enumerate(columns):
        page.evaluate(f"window.attnviz.set({{head: {h}}})")
        colours = page.evaluate(f"""(() => {{
            const G = window.attnviz.geometry(), cv = document.getElementById('map'), d = window.devicePixelRatio;
            const ctx = cv.getContext('2d'), col = Math.floor({c} / G.rk), out = [];
            for (const dc of [0, 5]) for (let i = 0; i < G.dq; i++) {{
                const x = Math.floor((G.left + (col + dc + 0.5) * G.cell) * d), y = Math.floor((G.top + (i + 0.5) * G.cell) * d);
                out.push([dc, ...ctx.getImageData(x, y, 1, 1).data.slice(0, 3)]);
            }}
            return out; }})()""")
        assert [rgb for dc, *rgb in colours if dc == 0] == [one] * (len(colours) // 2)  # every row, this column
        if c // page.evaluate("window.attnviz.geometry().rk") + 5 < page.evaluate("window.attnviz.geometry().dk"):
            assert [rgb for dc, *rgb in colours if dc == 5] == [zero] * (len(colours) // 2)  # 5 columns on: nothing
    assert page.evaluate("window.attnviz.geometry().cell") * dpr >= 1  # a drawn cell is never below a device pixel
    if dpr > 1:
        return  # a drawn cell is below a CSS pixel there: the pointer cannot single one out
    G = page.evaluate("window.attnviz.geometry()")
    col = columns[-1] // G["rk"]
    x, y = page.evaluate(f"window.attnviz.cellCenter(0, {col})")
    page.mouse.move(x, y)
    k0, k1 = col * G["rk"], min(T, (col + 1) * G["rk"]) - 1
    assert page.inner_text("#status") == (f"t0 … t{G['rq'] - 1} [0–{G['rq'] - 1}] → t{k0} … t{k1} [{k0}–{k1}]: "
                                          "largest 1.000000")  # a pooled cell names its block


def test_a_causal_maps_small_weights_keep_their_digits(open_page, tmp_path, lut):
    trace = near_uniform_causal(1500)
    o = open_page(_write(tmp_path, trace, lut)[0])
    assert "within 1/510 (0.2 %) of its row's maximum" in o.page.inner_text("#precision")
    truth = trace.probs(0)[1]
    for i, j in [(1499, 700), (1200, 3), (800, 799)]:
        shown = o.page.evaluate(f"window.attnviz.value(0, 1, {i}, {j})")
        bound = error_bound("uint8", truth[i:i + 1])[0, j]
        assert abs(shown - truth[i, j]) <= bound * (1 + 1e-6) + 1e-9 and shown > 1e-4


def test_byte_level_markers_show_as_spaces_with_the_raw_token_on_hover(open_page, tmp_path, lut):
    trace = sample_trace("encoder", T=5)
    trace.tokens[:] = ["The", "\u0120animal", "\u010a", "\u2581cat", " ok"]
    o = open_page(_write(tmp_path, trace, lut)[0])
    x, y = o.page.evaluate("window.attnviz.cellCenter(1, 3)")
    o.page.mouse.move(x, y)
    assert o.status().startswith("animal (token “\u0120animal”) [1] → cat (token “\u2581cat”) [3]: ")
    x, y = o.page.evaluate("window.attnviz.cellCenter(2, 4)")
    o.page.mouse.move(x, y)
    assert o.status().startswith("⏎ (token “\u010a”) [2] → ok (token “ ok”) [4]: ")  # a plain leading space too
    x, y = o.page.evaluate("window.attnviz.cellCenter(4, 0)")
    o.page.mouse.move(x, y)
    assert o.status().startswith("ok (token “ ok”) [4] → The [0]: ")  # negative control: "The" has no marker


def test_controls_only_where_they_act(open_page, tmp_path, trace, lut):
    o = open_page(_write(tmp_path, trace, lut)[0])
    assert o.page.is_visible("#scale") and o.page.is_visible("#tab-token-lines")
    o.page.click("#tab-token-lines")
    assert not o.page.is_visible("#scale") and not o.page.is_visible("#head")  # line opacity is the weight
    long = open_page(_write(tmp_path, ColumnTrace(3000, 1, [5, 9]), lut, name="long.html", view="token-lines",
                                max_bytes=2**20)[0])
    assert not long.page.is_visible("#tab-token-lines")  # a pooled page holds no weights to draw lines from
    assert long.page.evaluate("window.attnviz.view") == "head-map"


def test_a_vision_page_draws_the_patch_grid_over_the_picture(open_page, tmp_path, lut):
    trace = sample_trace("vit", n_layers=2, n_heads=2)
    o = open_page(_write(tmp_path, trace, lut)[0])
    assert o.page.is_visible("#picture")
    before = o.page.evaluate("document.getElementById('picture').toDataURL()")
    x, y = o.page.evaluate("window.attnviz.cellCenter(6, 0)")  # query patch 6 − 1 = (1, 1) of the 4×4 grid
    o.page.mouse.move(x, y)
    after = o.page.evaluate("document.getElementById('picture').toDataURL()")
    assert after != before and "picture under its 4×4 patch grid, with the weights of query 1,1" in \
        o.page.get_attribute("#picture", "aria-label")
    o.page.focus("#picture")
    o.page.keyboard.press("ArrowRight")  # the keyboard walks the query patch: (1, 1) → (1, 2)
    assert "with the weights of query 1,2" in o.page.get_attribute("#picture", "aria-label")
    assert o.status().startswith("1,2 [7] → ")
    text = open_page(_write(tmp_path, sample_trace("encoder", T=6), lut, name="text.html")[0])
    assert not text.page.is_visible("#picture")  # negative control: a text input has no picture


def test_the_notebook_iframe_fits_a_99_token_head_map(browser, tmp_path, lut, qapp):
    from attnviz.api.html_figure import HtmlFigure

    fig = HtmlFigure(sample_trace("decoder", T=99, n_layers=2, n_heads=4), view="head-map")
    host = tmp_path / "nb.html"
    for name, frame in [("fits", fig._repr_html_()), ("fixed", iframe_srcdoc(fig.page, 760))]:
        host.write_text(f"<!doctype html><html><body style='width:1000px'>{frame}</body></html>", encoding="utf-8")
        page = browser.new_page()
        page.goto(host.as_uri())
        page.frame_locator("iframe").locator("body[data-ready='1']").wait_for(timeout=30000)
        outer = page.evaluate("document.querySelector('iframe').clientHeight")
        scroll = page.frames[1].evaluate("document.documentElement.scrollHeight")
        page.close()
        if name == "fits":
            assert scroll <= outer, (scroll, outer)  # no scrolling inside the output
        else:
            assert scroll > outer  # negative control: the old fixed 760 px scrolled
