"""The interactive HTML page without a browser: stored data decode to the trace, budgets, CLI, bad input."""

from __future__ import annotations

import base64
import json
import re
import zlib

import numpy as np
import pytest

from attnviz.bench.traces import sample_trace, synthetic_trace
from attnviz.errors import AttnvizError
from attnviz.export.html_data import (MAX_BYTES, MAX_LINE_TOKENS, build_html_data, decoded_values,
                                      stored_values)
from attnviz.export.html_page import HEAD_COLOURS, html_page

LUT = np.tile(np.arange(256, dtype=np.uint8)[:, None], (1, 4))


def _page_parts(page: str):
    meta = json.loads(re.search(r"<script id='attnviz-meta' type='application/json'>(.*?)</script>", page, re.S)[1])
    blob = re.search(r"<script id='attnviz-data' type='text/plain'>(.*?)</script>", page, re.S)[1]
    return meta, zlib.decompress(base64.b64decode(blob))


def _stored_map(meta, raw, part: int, layer: int, head: int) -> np.ndarray:
    """One map as the browser decodes it (the script's layout, read again in numpy)."""
    P = meta["parts"][part]
    E = P["layers"][layer]
    nq, nk = P["rows"], P["cols"]
    if meta["precision"] == "fp16":
        n = P["heads"] * nq * nk
        hi, lo = (np.frombuffer(raw, np.uint8, n, E["offset"] + k * n).astype(np.uint16) for k in (0, 1))
        return ((hi << 8) | lo).view("<f2").reshape(P["heads"], nq, nk)[head].astype(np.float64)
    q = np.frombuffer(raw, np.uint8, P["heads"] * nq * nk, E["offset"]).reshape(P["heads"], nq, nk)
    rows = np.frombuffer(raw, "<f4", P["heads"] * nq, E["scale_offset"]).reshape(P["heads"], nq)  # each row's max
    return q[head] / 255.0 * rows[head].astype(np.float64)[:, None]


@pytest.mark.parametrize("precision", ["fp16", "uint8"])
def test_stored_maps_decode_to_the_trace(precision):
    trace = sample_trace("decoder", T=9, n_layers=2, n_heads=3, d_model=24)
    page, meta = html_page(trace, LUT, precision=precision)
    meta2, raw = _page_parts(page)
    assert meta2["precision"] == precision and meta2["parts"][0]["queries"] == list(trace.tokens)
    for layer in range(2):
        for head in range(3):
            got = _stored_map(meta2, raw, 0, layer, head)
            truth = trace.probs(layer)[head]
            tol = 2.0**-11 if precision == "fp16" else truth.max(axis=1, keepdims=True) / 510 + 1e-9
            assert np.all(np.abs(got - truth) <= tol * (1 + 1e-6))
            want = decoded_values(*stored_values(truth, precision))
            np.testing.assert_array_equal(got, want)
    # the causal mask travels with the map: the upper triangle is masked
    E = meta2["parts"][0]["layers"][1]
    mask = np.frombuffer(raw, np.uint8, 81, E["mask_offset"]).reshape(9, 9)
    np.testing.assert_array_equal(mask, np.triu(np.ones((9, 9), np.uint8), 1))
    # negative control: another head does not decode to this head's numbers
    assert not np.allclose(_stored_map(meta2, raw, 0, 1, 0), trace.probs(1)[1], atol=1e-3)


def test_the_page_is_self_contained_with_the_apps_colours():
    trace = sample_trace("encoder", T=8)
    lut = np.random.default_rng(0).integers(0, 256, (256, 4), dtype=np.uint8)
    page, meta = html_page(trace, lut, view="token-lines", layer=1, head=2)
    assert not re.search(r"https?://|<link|src=|@import|url\(", page, re.I)  # nothing to fetch
    meta2, _ = _page_parts(page)
    assert meta2["lut"] == lut.tolist() and meta2["start"] == {"part": "self", "layer": 1, "head": 2}
    assert meta2["view"] == "token-lines"


def test_hostile_tokens_stay_text():
    trace = sample_trace("encoder", T=6)
    evil = "</script><script>alert(1)</script>"
    trace.tokens[2] = evil
    trace.meta["input_text"] = "<img src=x onerror=alert(1)>"
    page, _ = html_page(trace, LUT)
    assert page.count("<script") == 3 and "<img" not in page  # meta, data, the page's own script
    meta, _ = _page_parts(page)
    assert meta["parts"][0]["queries"][2] == evil


def test_constants_agree_with_the_app():
    from attnviz.analysis.trace_parts import Resolved
    from attnviz.gui.style import HEAD_COLOURS as APP_COLOURS
    from attnviz.gui.views.token_lines_item import MAX_TOKENS
    from attnviz.selection import SelectionState

    assert HEAD_COLOURS == APP_COLOURS and MAX_LINE_TOKENS == MAX_TOKENS
    for kind in ("encoder-decoder", "decoder"):  # the page names each part as the app's titles do
        trace = sample_trace(kind, T=6)
        _, meta = html_page(trace, LUT)
        for p in meta["parts"]:
            assert p["name"] == Resolved(trace, SelectionState(part=p["part"])).part_name


def test_encoder_decoder_pages_hold_every_part():
    trace = sample_trace("encoder-decoder", T=6)
    _, meta = html_page(trace, LUT, part="cross")
    assert [p["part"] for p in meta["parts"]] == ["enc", "cross", "self"]
    cross = meta["parts"][1]
    assert cross["keys"] == trace.src_tokens and len(cross["queries"]) == len(trace.tokens)


def test_a_huge_input_is_cut_with_a_notice():
    trace = synthetic_trace(T=64, n_layers=6, n_heads=4)
    layer_bytes = 5 * 64 * 64 + 4 * 4 * 64  # 4 maps, the mask, 4 heads' row maxima (float32)
    data = build_html_data(trace, precision="uint8", max_bytes=3 * layer_bytes)  # 64 tokens: never pooled below
    assert [e["layer"] for e in data.meta["parts"][0]["layers"]] == [0, 1, 2] and not data.meta["pooled"]
    assert data.notices == ["showing layers 0–2 of 6 (self-attention): all layers would not fit in 0.0615 MB; "
                            "export another range with --layer (layer= in Python)"]
    page, meta = html_page(trace, LUT, layer=4, precision="uint8", max_bytes=3 * layer_bytes)
    assert [e["layer"] for e in meta["parts"][0]["layers"]] == [3, 4, 5]  # the asked layer stays in
    assert meta["notices"][0].startswith("showing layers 3–5 of 6")
    assert data.raw_bytes <= 3 * layer_bytes
    # negative control: a small input is not cut
    assert build_html_data(trace, precision="uint8").notices == []


def test_a_long_input_is_pooled_not_cut_and_stays_within_its_budget():
    trace = synthetic_trace(T=1024, n_layers=4, n_heads=8, causal=False)  # 32 M weights, 64 MB as fp16
    page, meta = html_page(trace, LUT, view="model")
    P = meta["parts"][0]
    assert meta["precision"] == "uint8" and meta["pooled"] and len(P["layers"]) == 4  # every layer kept
    assert P["row_step"] == P["col_step"] == 2 and P["rows"] == P["cols"] == 512
    assert meta["notices"] == ["the page stores the largest weight of each block of up to 2×2 query × key positions: "
                               "every weight would not fit in 24 MB"]
    assert meta["raw_bytes"] <= MAX_BYTES and len(page) <= MAX_BYTES * 4 / 3 * 1.05 + 200_000
    _, raw = _page_parts(page)
    got = _stored_map(meta, raw, 0, 3, 5)
    truth = trace.probs(3, heads=5)[0].reshape(512, 2, 512, 2).max(axis=(1, 3))  # (512, 512) block maxima
    assert np.all(np.abs(got - truth) <= truth.max(axis=1, keepdims=True) / 510 * (1 + 1e-6))
    assert not np.allclose(got, trace.probs(3, heads=5)[0, ::2, ::2], atol=1e-3)  # not every other cell


def test_bad_views_and_tables():
    trace = sample_trace("encoder", T=6)
    with pytest.raises(AttnvizError, match="shows head-map, model, token-lines, not 'rollout'"):
        html_page(trace, LUT, view="rollout")
    with pytest.raises(AttnvizError, match=r"\(256, 4\)"):
        html_page(trace, LUT[:10])
    with pytest.raises(AttnvizError, match="no separate encoder"):
        html_page(trace, LUT, part="enc")
    with pytest.raises(AttnvizError, match="unknown precision"):
        build_html_data(trace, precision="fp8")
