"""The HTML page at long length: pooled maps keep a lone column, stored values keep their stated bound,
the subtitle stays short, and building a page never asks for more than a head's block of rows."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.export.html_data import BOUND_TEXT, build_html_data, decoded_values, error_bound, stored_values
from attnviz.export.html_page import html_page, short_subtitle
from tests.export.long_maps import ColumnTrace, near_uniform_causal
from tests.export.test_html_page import LUT, _page_parts, _stored_map

COLUMNS = {1500: [3, 251, 700, 777, 1001, 1333, 1497, 1499], 3000: [1, 499, 1234, 1801, 2222, 2503, 2998, 2999]}


@pytest.mark.parametrize("T", [1500, 3000])
def test_a_column_of_ones_survives_pooling_at_every_size(T):
    trace = ColumnTrace(T, n_layers=2, columns=COLUMNS[T])
    page, meta = html_page(trace, LUT, max_bytes=4 * 2**20)  # 2 layers pooled as 6 would be in 12 MB
    P, (_, raw) = meta["parts"][0], _page_parts(page)
    assert meta["pooled"] and P["col_step"] > 1 and len(P["layers"]) == 2  # pooled, every layer kept
    cs = P["col_step"]
    for layer in (0, 1):
        for h, c in enumerate(COLUMNS[T]):
            got = _stored_map(meta, raw, 0, layer, h)  # (rows, cols)
            assert np.all(got[:, c // cs] == 1.0)  # the pooled column holding key c: 1.0 in every row
            others = np.delete(got, c // cs, axis=1)
            assert np.all(others == 0.0)
    # negative control: keeping every cs-th column (what the page did) loses most of these columns
    kept = [c for c in COLUMNS[T] if c % cs == 0]
    assert len(kept) < len(COLUMNS[T]) / 2


def test_stored_values_hold_their_bound_relative_to_each_row():
    trace = near_uniform_causal(1500)
    data = build_html_data(trace)
    assert data.meta["precision"] == "uint8" and not data.meta["pooled"]
    assert data.meta["bound"] == BOUND_TEXT["uint8"]
    page, meta = html_page(trace, LUT)
    _, raw = _page_parts(page)
    truth = trace.probs(0)  # (H, T, T)
    unmasked = ~np.isneginf(trace["L0.mask"])
    for h in range(2):
        got = _stored_map(meta, raw, 0, 0, h)
        assert np.all(np.abs(got - truth[h]) <= error_bound("uint8", truth[h]) * (1 + 1e-9))
        assert not np.any(got[unmasked] == 0.0)  # every weight (~1/1,500) keeps its digits
        i, j = 1499, 700  # a late row's weight is shown as itself, not 0.000000
        assert abs(got[i, j] - truth[h, i, j]) <= truth[h, i].max() / 510 and got[i, j] > 1e-4
    # negative control: one scale per map (the old encoding) stores most weights as 0, outside the row bound
    per_map = np.rint(truth[0] / truth[0].max() * 255) / 255 * truth[0].max()
    assert np.mean(per_map[unmasked] == 0.0) > 0.5
    assert np.any(np.abs(per_map - truth[0]) > error_bound("uint8", truth[0]))


def test_fp16_bound_and_its_negative_control():
    p = np.array([[0.5, 1e-3, 3e-6, 0.0], [0.25, 0.25, 0.25, 0.25]], np.float32)
    stored, top = stored_values(p, "fp16")
    assert top is None and np.all(np.abs(decoded_values(stored, top) - p) <= error_bound("fp16", p))
    coarse = p.astype(np.float64).round(2)  # two decimals: 1e-3 becomes 0
    assert np.any(np.abs(coarse - p) > error_bound("fp16", p))


def test_building_a_long_page_asks_for_blocks_not_layers():
    T = 3000
    trace = ColumnTrace(T, n_layers=1, columns=COLUMNS[T])
    data = build_html_data(trace, max_bytes=2**20)
    layer = 8 * T * T  # cells of one layer's maps
    assert 0 < trace.largest_block <= 256 * T  # a head's chunk of rows (Trace.pooled_probs streams them)
    assert trace.largest_block * 50 < layer
    assert data.raw_bytes <= 2**20


def test_the_subtitle_is_short():
    trace = ColumnTrace(3000, n_layers=1, columns=[0])
    page, meta = html_page(trace, LUT)
    sub = short_subtitle(trace.meta["input_text"], "3,000 tokens")
    assert len(sub) <= 110 and sub.endswith("… (3,000 tokens)") and meta["input"] == sub
    assert f"<p class='sub' id='subtitle'>{sub}</p>" in page
    assert page.count("word ") < 40  # the page holds the first words, not the whole input text
    assert short_subtitle("the cat sat", "3 tokens") == "the cat sat (3 tokens)"


def test_an_encoder_decoders_length_names_both_sides(tmp_path):
    """T5's page said "(33 tokens)" and the status bar "33 positions": the decoder's side alone."""
    from attnviz.analysis.decoder_positions import length_words
    from attnviz.bench.traces import sample_trace
    from attnviz.gui.window.shown_trace import run_summary
    from attnviz.runtime import load_model, run_trace

    t = run_trace(load_model("translate"), text="the big dog sees a small cat")
    n_src, n = len(t.src_tokens), len(t.tokens)
    assert n_src and length_words(t) == f"{n_src} source + {n} target tokens"
    assert f"({n_src} source + {n} target tokens)" in html_page(t, LUT)[1]["input"]
    assert f" · {n_src} source + {n} target positions · " in run_summary(t, 0.1)
    enc = sample_trace("encoder", T=8)  # control: one input, one count
    assert length_words(enc) == "8 tokens" and " · 8 positions · " in run_summary(enc, 0.1)


def test_the_grid_numbers_are_left_out_where_they_would_cost_more_than_the_page():
    from attnviz.bench.traces import synthetic_trace
    from attnviz.export.html_page import STATS_BYTES

    calls = []

    def stats(trace, part, layers):  # records the call; the numbers themselves are tested with the app's
        calls.append(part)
        raise AssertionError("not wanted here")

    big = synthetic_trace(T=1100, n_layers=1, n_heads=8, causal=False)  # 77 MB of float64: one layer over
    assert 8 * 8 * 1100 * 1100 > STATS_BYTES
    _, meta = html_page(big, LUT, view="model", head_stats=stats)
    assert calls == [] and not meta["pooled"] and "entropy" not in meta["parts"][0]["layers"][0]
    # negative control: a short input's grid asks for them
    from attnviz.gui.views.model_summary import summarize_stats

    _, small = html_page(synthetic_trace(T=16, n_layers=1, n_heads=2), LUT, view="model", head_stats=summarize_stats)
    assert len(small["parts"][0]["layers"][0]["entropy"]) == 2
