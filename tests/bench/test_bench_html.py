"""`attnviz bench --only html` measures what it says (the figures themselves are printed, never asserted)."""

from __future__ import annotations

import sys

from attnviz.bench.html import bertviz_model_view_size
from attnviz.bench.traces import sample_trace


def test_bertviz_size_is_measured_or_computed_from_its_format(monkeypatch):
    trace = sample_trace("encoder", T=6, n_layers=2, n_heads=2)
    size, how, _ = bertviz_model_view_size(trace)
    monkeypatch.setitem(sys.modules, "bertviz", None)  # as if BertViz were not installed
    computed, how2, remote = bertviz_model_view_size(trace)
    assert how2.startswith("computed from BertViz's format") and remote is None
    floats = sum(p.size for p in trace.all_probs())
    assert computed > floats * 8  # JSON text of every float: far more than a byte per weight
    if how.startswith("bertviz.model_view"):  # installed: its file holds that JSON and its page around it
        assert abs(size - computed) < 0.2 * computed + 50_000
    # negative control: twice the tokens, about four times the text
    bigger = bertviz_model_view_size(sample_trace("encoder", T=12, n_layers=2, n_heads=2))[0]
    assert bigger > 3 * computed


def test_the_long_page_figures_are_measured_not_asserted():
    from attnviz.bench.html import measure_long_html

    figures = measure_long_html(T=300, n_layers=1, n_heads=2)
    key = "T=300 (1×2 heads, decoder)"
    assert {f"{key} html build median (s)", f"{key} html build peak allocated (MB)",
            f"{key} bytes the page keeps (MB, raw maps before deflate)", f"{key} html file (MB)"} <= set(figures)
    assert figures[f"{key} stored as"] == "fp16"  # a short input: every weight, as float16
    assert figures[f"{key} html build peak allocated (MB)"] > 0  # tracemalloc saw the build (a figure, not a bound)
