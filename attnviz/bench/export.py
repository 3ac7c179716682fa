"""Export benchmarks: one head map as PDF and SVG (goal ≤ 1 s), a lecture pack (goal ≤ 30 s)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

__all__ = ["run_export_benchmarks"]


def run_export_benchmarks(model: str = "coref",
                          text: str = "The animal didn't cross the street because it was too tired") -> dict:
    from attnviz.export.batch import export_lecture_pack, export_one
    from attnviz.export.headless import ensure_app
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    app = ensure_app()  # noqa: F841
    loaded = load_model(model)
    trace = run_trace(loaded, text=text, grad=True)
    style, opts = export_style(), ExportOptions()
    out: dict = {"model": model, "tokens": len(trace.tokens)}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("pdf", "svg", "png"):
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                export_one("head-map", trace, SelectionState(layer=1, head=0), Path(tmp) / f"hm.{fmt}", opts, style)
                times.append(time.perf_counter() - t0)
            out[f"head map {fmt.upper()} s (best of 3)"] = min(times)
        t0 = time.perf_counter()
        entries = export_lecture_pack(trace, Path(tmp) / "pack", opts, style)
        out["lecture pack s (incl. trace)"] = time.perf_counter() - t0
        out["lecture pack figures"] = len(entries)
    out["goals"] = "head map PDF/SVG <= 1 s; lecture pack <= 30 s"
    return out
