"""The view benchmarks run and report numbers (the full sizes run with ``attnviz bench``)."""

from __future__ import annotations

import io
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attnviz.bench.views import benchmark_head_switch, benchmark_model_grid  # noqa: E402


def test_benchmarks_report_milliseconds(qapp):
    out = io.StringIO()
    res = benchmark_head_switch((64, 1100), n_heads=2, repeats=2, out=out)
    assert set(res) == {64, 1100}
    assert all(v > 0 for r in res.values() for v in r.values())
    assert "T=   64" in out.getvalue() and "cold" in out.getvalue()  # 1100 > 1024 is pooled
    grid = benchmark_model_grid(T=16, n_layers=3, n_heads=3, repeats=2, out=out)
    assert grid["wall"] > 0 and "model grid 3x3" in out.getvalue()
