"""The still picture an interactive page shows where scripts cannot run, drawn by the export renderer.

A sandbox without scripts, a strict content policy, an untrusted notebook or a browser with JavaScript
off shows the page's ``<noscript>``: one line and this PNG of the figure the page opens on, the file
``attnviz export --view`` writes for the same selection (one renderer for screen, file and fallback).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

__all__ = ["fallback_picture", "FALLBACK_SIZE"]

FALLBACK_SIZE = (960, 540)  # CSS px it is shown at; drawn at 1× (a 2× picture would double a short page)


def fallback_picture(trace, state, style, meta: dict) -> tuple[bytes, int, str]:
    """(PNG bytes, width in CSS px, alt text) of the view ``meta["view"]`` opens on at ``state``.

    A pooled page has no token lines (they need every weight): its picture is the head map it opens on.
    """
    from attnviz.export.batch import export_one
    from attnviz.export.headless import ensure_app
    from attnviz.gui.figure_render import ExportOptions

    view = "head-map" if meta["view"] == "token-lines" and meta["pooled"] else meta["view"]
    app = ensure_app()  # noqa: F841 (Qt alive while the view paints)
    opts = ExportOptions(*FALLBACK_SIZE)
    with tempfile.TemporaryDirectory(prefix="attnviz-") as tmp:
        png = export_one(view, trace, replace(state, query=None), Path(tmp) / "fallback.png", opts, style).read_bytes()
    P = next(p for p in meta["parts"] if p["part"] == state.part)
    what = {"head-map": f"head map of layer {state.layer}, head {state.head}", "model": "all heads",
            "token-lines": f"token lines of layer {state.layer}"}[view]
    return png, FALLBACK_SIZE[0], f"attnviz figure: {what}, {P['name']} (a still picture)"
