"""``attnviz bench --only html``: the interactive HTML page beside BertViz's model view, same model and input.

The model is BERT-shaped (6 layers × 12 heads, d_model 768, BERT's initialisation spread 0.02) with
random weights, traced through the real capture path at ~100 and ~400 tokens. For each length:

- the size of attnviz's page (every layer and head, self-contained) and of BertViz's ``model_view``
  HTML for the same attention: from BertViz itself when it is installed, otherwise computed from its
  documented format (the attention embedded as JSON text of the floats, ``json.dumps(attn.tolist())``),
  which is the bulk of its file either way;
- the first paint of attnviz's page in headless Chromium (navigation start → the first frame after the
  map is drawn), when ``/usr/bin/chromium`` and Playwright are present;
- the largest difference between a value the page shows on hover and the trace, for 2,000 cells.

And a long input (:func:`measure_long_html`): a GPT-2-shaped decoder (6 layers × 8 heads, random
weights) traced at 3,000 tokens, its page built as ``attnviz export --view head-map -o x.html`` builds it
(without the still picture, which is the PNG export's cost): build time, peak memory allocated while
building (tracemalloc: NumPy's buffers included), the bytes the page keeps, and the file's size.
"""

from __future__ import annotations

import gc
import json
import re
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

__all__ = ["measure_html", "measure_long_html", "bertviz_model_view_size", "CHROMIUM"]

CHROMIUM = "/usr/bin/chromium"
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def bertviz_model_view_size(trace) -> tuple[int, str, int | None]:
    """(bytes of BertViz's model view HTML for ``trace``'s self-attention, how it was obtained, how many
    scripts it loads from the network — None when BertViz is not installed)."""
    probs = [np.asarray(trace.probs(i), dtype=np.float32)[None] for i in range(trace.n_layers)]  # (1, H, T, T)
    try:
        import torch
        from bertviz import model_view

        with warnings.catch_warnings():  # BertViz leaves its script files open (a ResourceWarning when collected)
            warnings.simplefilter("ignore", ResourceWarning)
            page = model_view([torch.from_numpy(p) for p in probs], list(trace.tokens), html_action="return").data
            gc.collect()
        remote = set(re.findall(r"https://cdnjs[^'\" )]+", page))  # require.js, d3, jQuery: blank offline
        return len(page.encode("utf-8")), "bertviz.model_view(html_action='return')", len(remote)
    except ImportError:
        # its format: {"attention": [{"name": None, "attn": <(L, H, T, T) as nested lists>, "left_text":
        # tokens, "right_text": tokens}], ...} written with json.dumps; the script and markup add ~30 kB
        attn = np.concatenate(probs, axis=0).tolist()  # (L, H, T, T) as BertViz's attn.tolist()
        text = json.dumps({"attention": [{"name": None, "attn": attn, "left_text": list(trace.tokens),
                                          "right_text": list(trace.tokens)}], "bidirectional": True})
        return len(text.encode("utf-8")), "computed from BertViz's format (JSON floats): bertviz not installed", None


def _stored(trace, precision: str, layer: int, head: int) -> np.ndarray:
    """One map as the page stores it (fp16, or uint8 of its maximum), decoded: what a hover may show."""
    from attnviz.export.html_data import decoded_values, stored_values

    stored, top = stored_values(trace.probs(layer)[head], precision)
    return decoded_values(stored, top)


def _browser_figures(path: Path, trace, precision: str, repeat: int) -> dict:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"first paint": "not measured: Playwright is not installed"}
    if not Path(CHROMIUM).exists():
        return {"first paint": f"not measured: {CHROMIUM} is not installed"}
    paints, worst = [], 0.0
    rng = np.random.default_rng(0)
    with sync_playwright() as pw:
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as profile:
                ctx = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=BROWSER_FLAGS,
                                                            headless=True)
                page = ctx.new_page()
                page.goto(path.as_uri())
                page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=60000)
                paints.append(page.evaluate("window.attnviz.painted") / 1000.0)
                if not worst:
                    T, H, L = len(trace.tokens), trace.n_heads, trace.n_layers
                    cells = [(int(rng.integers(L)), int(rng.integers(H)), int(rng.integers(T)), int(rng.integers(T)))
                             for _ in range(2000)]
                    shown = page.evaluate("(cs) => cs.map(([l, h, i, j]) => window.attnviz.value(l, h, i, j))", cells)
                    truth = [_stored(trace, precision, l, h)[i, j] for l, h, i, j in cells]
                    worst = max(abs(a - b) for a, b in zip(shown, truth))
                ctx.close()
    return {"first paint median (s)": float(np.median(paints)), "first paint worst (s)": float(max(paints)),
            f"hover − trace (as stored, {precision}), largest over 2,000 cells": worst}


def measure_html(repeat: int = 3) -> dict:
    """Sizes beside BertViz's, first paint and hover precision at ~100 and ~400 tokens (see the module)."""
    from attnviz.bench.traces import sample_trace
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut
    from attnviz.gui.views.model_summary import summarize_stats

    style = export_style()
    figures: dict = {}
    for T in (100, 400):
        trace = sample_trace("encoder", T=T, n_layers=6, n_heads=12, d_model=768, std=0.02)
        t0 = time.perf_counter()
        page, meta = html_page(trace, colour_lut(style), view="model", style=style, head_stats=summarize_stats)
        build = time.perf_counter() - t0
        ours = len(page.encode("utf-8"))
        theirs, how, remote = bertviz_model_view_size(trace)
        key = f"T={T} (6×12 heads)"
        figures[f"{key} attnviz html (MB, {meta['precision']})"] = ours / 1e6
        figures[f"{key} BertViz model view (MB)"] = theirs / 1e6
        figures[f"{key} BertViz ÷ attnviz"] = theirs / ours
        figures[f"{key} page written in (s)"] = build
        figures[f"{key} BertViz size from"] = how
        if remote is not None:
            figures[f"{key} BertViz scripts loaded from a CDN (attnviz: 0)"] = remote
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "page.html"
            path.write_text(page, encoding="utf-8")
            for name, value in _browser_figures(path, trace, meta["precision"], repeat).items():
                figures[f"{key} {name}"] = value
    figures.update(measure_long_html())
    return figures


def measure_long_html(T: int = 3000, n_layers: int = 6, n_heads: int = 8, repeat: int = 1) -> dict:
    """Build time and peak memory of the interactive page of a ``T``-token decoder trace (see the module)."""
    from attnviz.bench.traces import sample_trace
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    style = export_style()
    lut = colour_lut(style)
    t0 = time.perf_counter()
    trace = sample_trace("decoder", T=T, n_layers=n_layers, n_heads=n_heads, d_model=64, std=0.02)
    traced = time.perf_counter() - t0
    key = f"T={T:,} ({n_layers}×{n_heads} heads, decoder)"
    builds, peaks = [], []
    for _ in range(repeat):
        gc.collect()
        tracemalloc.start()
        t0 = time.perf_counter()
        page, meta = html_page(trace, lut, view="head-map", style=style)
        builds.append(time.perf_counter() - t0)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    P = meta["parts"][0]
    return {f"{key} trace captured in (s, not the page's)": traced,
            f"{key} html build median (s)": float(np.median(builds)),
            f"{key} html build peak allocated (MB)": max(peaks) / 1e6,
            f"{key} bytes the page keeps (MB, raw maps before deflate)": meta["raw_bytes"] / 1e6,
            f"{key} page size (MB, as written)": len(page.encode("utf-8")) / 1e6,
            f"{key} html file (MB)": len(page.encode("utf-8")) / 1e6,
            f"{key} one layer's full float32 maps, for scale (MB)": n_heads * T * T * 4 / 1e6,
            f"{key} stored as": f"{meta['precision']}, each cell the largest of {P['row_step']}×{P['col_step']} "
                                f"weights ({P['rows']}×{P['cols']} a map)" if meta["pooled"] else meta["precision"]}


def measure_long_html_on_demand(T: int = 3000, n_layers: int = 6, n_heads: int = 8, d_model: int = 64,
                                with_picture: bool = True, dtype: str = "float32") -> dict:
    """The page of a ``T``-token input into a random GPT-2 (``n_layers`` × ``n_heads``, weights in ``dtype``:
    a float16 model's trace keeps float16 arrays) captured as the CLI
    captures a Hugging Face model (on demand: q, k and each row's log-sum-exp, no (H, T, T) map), built as
    ``attnviz export --view head-map -o x.html`` builds it, still picture included: build wall and CPU time,
    peak memory allocated while building (tracemalloc), the bytes the page keeps and the page's size. Printed,
    never asserted."""
    import torch
    import transformers as tf

    from attnviz.export.html_fallback import fallback_picture
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut
    from attnviz.hf.capture import capture_hf
    from attnviz.selection import SelectionState

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=1000, n_embd=d_model, n_layer=n_layers, n_head=n_heads,
                                             n_positions=max(T, 1024), bos_token_id=0, eos_token_id=0)).eval()
    model = model.to(getattr(torch, dtype))
    ids = torch.randint(0, 1000, (1, T))
    trace = capture_hf(model, {"input_ids": ids}, [f"t{i}" for i in range(T)], meta={"model_name": "random GPT-2"})
    style, state = export_style(), SelectionState()
    gc.collect()
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    page, meta = html_page(trace, colour_lut(style), view="head-map", style=style,
                           fallback=(lambda m: fallback_picture(trace, state, style, m)) if with_picture else None)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    key = f"T={T:,} ({n_layers}×{n_heads} heads, random GPT-2 on demand)"
    kept = "probs" if any(k.endswith(".probs") for k in trace.arrays) else "q, k, lse"
    return {f"{key} html build (s, wall)": wall, f"{key} html build (s, CPU)": cpu,
            f"{key} html build peak allocated (MB)": peak / 1e6,
            f"{key} bytes the page keeps (MB, raw maps before deflate)": meta["raw_bytes"] / 1e6,
            f"{key} page size (MB, as written)": len(page.encode("utf-8")) / 1e6,
            f"{key} one layer's full float32 maps, for scale (MB)": n_heads * T * T * 4 / 1e6,
            f"{key} the trace keeps per layer": kept,
            f"{key} still picture": "drawn from the max-pooled overview" if meta["pooled"] and with_picture
            else ("none" if not with_picture else "the export renderer's view")}
