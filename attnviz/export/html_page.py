"""The interactive HTML figure: one self-contained file (markup, style, script and data inside).

Qt-free: the caller hands over the app's colour lookup table (``gui.style.colour_lut``), so the page
colours the maps exactly as the app does without importing a renderer. Nothing is fetched: no CDN,
no font, no image; the data are decoded in the browser (see :mod:`attnviz.export.html_data`).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import numpy as np

from attnviz.errors import AttnvizError, InputError
from attnviz.analysis.decoder_positions import length_words
from attnviz.export.html_data import MAX_BYTES, build_html_data
from attnviz.export.html_layout import LAYOUT, page_height
from attnviz.export.html_script import SCRIPT

__all__ = ["HTML_VIEWS", "html_page", "save_page", "iframe_srcdoc", "HEAD_COLOURS", "short_subtitle"]

HTML_VIEWS = ("head-map", "model", "token-lines")
# the app's head colours (gui/style.HEAD_COLOURS; a test checks they agree): the style module is in the
# GUI package, whose import starts pyqtgraph's Qt set-up, and this page must stay Qt-free
HEAD_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#332288",
                "#999933")

_STYLE = """
body{font:14px system-ui,sans-serif;margin:12px;color:FG;background:BG}
h1{font-size:17px;margin:0 0 4px} .sub{color:#666;margin:0 0 8px;font-size:13px}
nav{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin:6px 0}
nav .tabs button{border:1px solid #999;background:none;color:inherit;padding:3px 10px;cursor:pointer}
nav .tabs button.on{background:#333;color:#fff}
#heads button{border:2px solid;background:none;margin:1px;padding:1px 6px;cursor:pointer;font-weight:bold}
#heads button.off{opacity:.3}
#notice{background:#fff3cd;border:1px solid #d6b656;padding:4px 8px;margin:6px 0}
#title{font-weight:bold;margin:6px 0} #status{font-family:monospace;min-height:1.3em;margin:4px 0}
canvas{display:block} canvas[hidden]{display:none}
#view-head-map:not([hidden]){display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}
:focus-visible{outline:3px solid #ff3030;outline-offset:2px}
.noscript{background:#fff3cd;border:1px solid #d6b656;padding:4px 8px;margin:6px 0;color:#202020}
.noscript-figure{max-width:100%;height:auto}
"""
STATS_BYTES = 64 * 2**20  # a layer's maps in float64 at most for the grid's entropy and distance (12 × 820²)
SUBTITLE_CHARS = 90  # of the input text on top of the page: a long document's text would push the figure down


def short_subtitle(text: str, count: str) -> str:
    """The input as the page's subtitle: its first words and its length (``count``: "1,500 tokens"), never a
    whole document."""
    text = " ".join(str(text or "").split())
    if len(text) > SUBTITLE_CHARS:
        text = text[:SUBTITLE_CHARS].rsplit(" ", 1)[0].rstrip() + " …"
    return f"{text} ({count})" if text else count


def _fallback(meta: dict, fallback) -> str:
    """What shows where scripts cannot run: one line, and the still picture of the opening figure."""
    line = ("<p class='noscript'>Scripts cannot run here, so this is a still picture of the figure: open the "
            "file in a browser with JavaScript for layers, heads and hovers.</p>")
    if fallback is None:
        return f"<noscript>{line}</noscript>"
    png, width, alt = fallback
    src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return (f"<noscript>{line}<img class='noscript-figure' src='{src}' width='{int(width)}' "
            f"alt='{html.escape(alt, quote=True)}'></noscript>")


def _body(meta: dict, fallback) -> str:
    model = html.escape(meta["model"])
    text = html.escape(meta["input"])  # already short_subtitle's
    scale = "".join(f"<option value='{v}'>{t}</option>" for v, t in (
        ("fixed", "fixed 0–1"), ("per-map", "each map's maximum"), ("shared", "shared by all heads")))
    tabs = "".join(f"<button id='tab-{v}' role='tab' aria-controls='view-{v}'>{t}</button>" for v, t in (
        ("head-map", "Head map"), ("model", "All heads"), ("token-lines", "Token lines")))
    return f"""<h1>attnviz · {model}</h1><p class='sub' id='subtitle'>{text}</p>
<p class='sub' id='precision'>weights stored in this page as {html.escape(meta["bound"])}; hovers show them as stored</p>
{_fallback(meta, fallback)}
<div id='app' hidden>
<div id='notice' role='note' hidden></div>
<nav aria-label='figure controls'><span class='tabs' role='tablist' aria-label='view'>{tabs}</span>
<label>part <select id='part'></select></label><label>layer <select id='layer'></select></label>
<label>head <select id='head'></select></label><label>colour scale <select id='scale'>{scale}</select></label>
<span role='group' aria-label='heads drawn'><span id='heads'></span> <button id='all-heads'>All heads</button></span></nav>
<div id='title' role='heading' aria-level='2'></div><div id='status' role='status' aria-live='polite'>&nbsp;</div>
<div id='view-head-map' role='tabpanel'><canvas id='map' tabindex='0' role='img'></canvas>
<canvas id='picture' tabindex='0' role='img' hidden></canvas></div>
<div id='view-model' role='tabpanel' hidden><div id='grid-pages' role='group' aria-label='pages of heads' hidden>
<button id='grid-up' title='previous layers'>▲</button><button id='grid-down' title='next layers'>▼</button>
<button id='grid-left' title='previous heads'>◀</button><button id='grid-right' title='next heads'>▶</button>
<span id='grid-page'></span></div><canvas id='grid' tabindex='0' role='img'></canvas></div>
<div id='view-token-lines' role='tabpanel' hidden><canvas id='lines' tabindex='0' role='img'></canvas></div>
</div>"""


def html_page(trace, lut, view: str = "head-map", layer: int = 0, head: int = 0, part: str = "self",
              precision: str = "auto", max_bytes: int = MAX_BYTES, style=None, head_stats=None,
              fallback=None) -> tuple[str, dict]:
    """The page's text and its metadata (what was stored, the notices).

    Parameters
    ----------
    trace : the Trace to show (every layer and head of every part it has).
    lut : (256, 4) uint8 RGBA, the app's lookup table (``attnviz.gui.style.colour_lut``).
    view : the view the page opens on: head-map, model or token-lines.
    layer, head, part : what it opens on (part must exist: an encoder has no cross-attention).
    precision, max_bytes : see :func:`attnviz.export.html_data.build_html_data`.
    style : a ViewStyle for the page's colours (background, text, masked); default light.
    head_stats : ``head_stats(trace, part, layers)`` → entropy (L, H) in nats, mean distance (L, H) or None and
        its unit, as the app's model view computes them (``gui.views.model_summary.summarize_stats``); the
        page shows them under each head of the grid and on hover. Left out of a pooled page and where one
        layer's maps in float64 would pass :data:`STATS_BYTES` (building the page would cost far more than
        it keeps).
    fallback : ``fallback(meta)`` → (PNG bytes, width in CSS px, alt text) of the opening figure, drawn by
        the export renderer (:func:`attnviz.export.html_fallback.fallback_picture`): shown with a one-line
        message where scripts cannot run (a sandbox, a strict policy, an untrusted notebook, JavaScript off).
        None: the message alone.
    """
    if view not in HTML_VIEWS:
        raise InputError(f"the interactive HTML page shows {', '.join(HTML_VIEWS)}, not {view!r}: export "
                         f"{view} to .png, .svg or .pdf")
    trace.check_selection(part, layer, head)
    lut = np.asarray(lut, dtype=np.uint8)
    if lut.shape != (256, 4):
        raise AttnvizError(f"a colour lookup table is (256, 4) RGBA, not {lut.shape}")
    data = build_html_data(trace, None, precision, max_bytes, first_layer=layer)  # a cut keeps ``layer`` on
    # the statistics read every weight of every layer (streamed in row blocks: memory is not the issue, time is):
    # past STATS_BYTES of a layer's float64 maps (and for pooled pages) that costs far more than the page keeps,
    # so the grid goes without its numbers there
    layer_f64 = max(8 * int(np.prod(trace.probs_shape(0, P["part"]))) for P in data.meta["parts"])
    if head_stats is not None and not data.meta["pooled"] and layer_f64 <= STATS_BYTES:
        for P in data.meta["parts"]:
            rows = [E["layer"] for E in P["layers"]]
            stats = head_stats(trace, P["part"], range(rows[0], rows[-1] + 1))
            P["distance_unit"] = stats.distance_unit if stats.distance is not None else None
            for row, E in enumerate(P["layers"]):
                E["entropy"] = [float(v) for v in stats.entropy[row]]
                E["distance"] = None if stats.distance is None else [float(v) for v in stats.distance[row]]
    bg, fg = (style.background, style.foreground) if style is not None else ("#ffffff", "#202020")
    # the page carries the input's first words only: a long document's text would be most of the file
    meta = dict(data.meta, input=short_subtitle(data.meta["input"], length_words(trace)),
                lut=lut.tolist(), view=view, start={"part": part, "layer": layer, "head": head},
                head_colours=list(HEAD_COLOURS), layout=LAYOUT, bg=bg, fg=fg, highlight="#ff3030")
    picture = fallback(meta) if fallback is not None else None
    meta["fallback_png"] = picture[0] if picture is not None else None  # bytes: for a notebook's still output
    # every "<" escaped: a token can neither end the <script> nor open a nested one ("<!--<script>")
    payload = json.dumps({k: v for k, v in meta.items() if k != "fallback_png"}, ensure_ascii=True).replace("<", "\\u003c")
    title = html.escape(f"attnviz · {meta['model']} · {view}")
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
            f"<meta name='generator' content='attnviz'>"
            f"<style>{_STYLE.replace('FG', fg).replace('BG', bg)}</style></head><body>{_body(meta, picture)}"
            f"<script id='attnviz-meta' type='application/json'>{payload}</script>"
            f"<script id='attnviz-data' type='text/plain'>{data.blob}</script>"
            f"<script>{SCRIPT}</script></body></html>")
    meta["height"] = page_height(meta)
    return page, meta


def save_page(path, page: str) -> Path:
    """Write a page to ``path`` atomically (a failed write leaves no half page)."""
    from attnviz.io import write_atomic

    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise AttnvizError(f"cannot write the interactive figure to {path.name}: use .html")
    try:
        write_atomic(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    except OSError as exc:
        raise AttnvizError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def iframe_srcdoc(page: str, height: int = 760) -> str:
    """The page inside an ``<iframe srcdoc>``: Jupyter shows it inline, scripts run, nothing fetched.

    ``height`` in CSS px: the page's own (``meta["height"]``), so its opening view does not scroll inside.
    """
    return (f"<iframe srcdoc=\"{html.escape(page, quote=True)}\" style='width:100%;height:{height}px;border:0' "
            f"sandbox='allow-scripts' title='attnviz interactive figure'></iframe>")
