"""The HTML page's masked blocks come from the one pooling the All heads grid uses
(:func:`attnviz.analysis.head_overview.pooled_mask`, asked per layer), stored in the page's own encoding (uint8, 1 where
every cell of a block is masked; no mask stored when no block is). Each layer's own mask is stored (a sliding-window
layer's differs from a causal one's), and a pooled long page's blocks are the whole mask's blocks."""

from __future__ import annotations

import base64
import zlib

import numpy as np

from attnviz.analysis.block_pool import block_all
from attnviz.bench.on_demand_traces import capture_format_trace
from attnviz.bench.traces import synthetic_trace
from attnviz.export.html_data import build_html_data


def _masks(data) -> dict[int, np.ndarray | None]:
    """Layer -> the page's stored (rows, cols) mask of the first part, as the browser reads it (None: none stored)."""
    raw = zlib.decompress(base64.b64decode(data.blob))
    P = data.meta["parts"][0]
    return {E["layer"]: (np.frombuffer(raw, np.uint8, P["rows"] * P["cols"], E["mask_offset"]).reshape(P["rows"], P["cols"])
                         if "mask_offset" in E else None) for E in P["layers"]}


def test_each_layers_own_mask_in_the_pages_encoding():
    T = 24
    trace = synthetic_trace(T, n_layers=2, n_heads=1)
    window = np.array(trace.arrays["L1.mask"], copy=True)
    i, j = np.indices((T, T))
    window[i - j >= 4] = -np.inf  # layer 1 attends to its last 4 keys only
    trace.arrays["L1.mask"] = window
    got = _masks(build_html_data(trace, precision="fp16"))
    assert got[0].dtype == np.uint8 and set(np.unique(got[0])) == {0, 1}
    np.testing.assert_array_equal(got[0], np.isneginf(trace.arrays["L0.mask"]).astype(np.uint8))
    np.testing.assert_array_equal(got[1], np.isneginf(window).astype(np.uint8))
    assert (got[0] != got[1]).any()  # control: the two layers' masks differ, so reading one for both would fail


def test_no_mask_is_stored_when_no_block_is_masked():
    trace = synthetic_trace(16, n_layers=1, n_heads=1, causal=False)
    assert _masks(build_html_data(trace, precision="fp16")) == {0: None}


def test_a_pooled_long_page_stores_the_whole_masks_blocks():
    trace = capture_format_trace(700, n_heads=1, d_head=8)  # its mask computed on demand, read in bands
    data = build_html_data(trace, precision="uint8", max_bytes=60_000)
    P = data.meta["parts"][0]
    rs, cs = P["row_step"], P["col_step"]
    assert rs > 1 and cs > 1  # pooled
    want = block_all(np.isneginf(trace["L0.mask"]), rs, cs).astype(np.uint8)
    got = _masks(data)[0]
    np.testing.assert_array_equal(got, want)
    assert 0 < got.sum() < got.size  # control: a causal map's blocks are neither all masked nor none


def test_the_page_asks_the_grids_pooling(monkeypatch):
    import attnviz.export.html_data as html_data
    from attnviz.analysis import head_overview

    asked = []

    def spy(*args, **kwargs):
        asked.append(kwargs.get("layer", 0))
        return head_overview.pooled_mask(*args, **kwargs)
    monkeypatch.setattr(html_data, "pooled_mask", spy)
    build_html_data(synthetic_trace(12, n_layers=2, n_heads=1), precision="fp16")
    assert asked == [0, 1]
