"""The still picture an interactive page shows where scripts cannot run, drawn by the export renderer.

A sandbox without scripts, a strict content policy, an untrusted notebook or a browser with JavaScript
off shows the page's ``<noscript>``: one line and this PNG of the figure the page opens on, the file
``attnviz export --view`` writes for the same selection (one renderer for screen, file and fallback).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

__all__ = ["fallback_picture", "pooled_head_picture", "FALLBACK_SIZE"]

FALLBACK_SIZE = (960, 540)  # CSS px it is shown at; drawn at 1× (a 2× picture would double a short page)


def fallback_picture(trace, state, style, meta: dict) -> tuple[bytes, int, str]:
    """(PNG bytes, width in CSS px, alt text) of the view ``meta["view"]`` opens on at ``state``.

    A pooled page has no token lines (they need every weight): its picture is the head map it opens on, drawn
    from :meth:`Trace.pooled_probs` (:func:`pooled_head_picture`), so the picture costs what the page keeps.
    """
    from attnviz.export.batch import export_one
    from attnviz.export.headless import ensure_app
    from attnviz.figures.render import ExportOptions

    view = "head-map" if meta["view"] == "token-lines" and meta["pooled"] else meta["view"]
    if view == "head-map" and meta["pooled"]:  # a long map: drawn from its max-pooled overview, never whole
        return pooled_head_picture(trace, state, style, meta)
    app = ensure_app()  # noqa: F841 (Qt alive while the view paints)
    opts = ExportOptions(*FALLBACK_SIZE)
    with tempfile.TemporaryDirectory(prefix="attnviz-") as tmp:
        png = export_one(view, trace, replace(state, query=None), Path(tmp) / "fallback.png", opts, style).read_bytes()
    P = next(p for p in meta["parts"] if p["part"] == state.part)
    what = {"head-map": f"head map of layer {state.layer}, head {state.head}", "model": "all heads",
            "token-lines": f"token lines of layer {state.layer}"}[view]
    return png, FALLBACK_SIZE[0], f"attnviz figure: {what}, {P['name']} (a still picture)"


def pooled_head_picture(trace, state, style, meta: dict) -> tuple[bytes, int, str]:
    """(PNG bytes, width in CSS px, alt text): one head's map max-pooled to the picture's pixels.

    Read through :meth:`Trace.pooled_probs` (row blocks of :meth:`Trace.probs`: a long input's map is
    recomputed block by block, never whole), so a single large weight (a column of 1.0) stays visible. Colours
    are the app's lookup table on the fixed 0–1 scale; the title says what a pixel stands for.
    """
    import numpy as np
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    from attnviz.export.headless import ensure_app
    from attnviz.gui.style import colour_lut
    from attnviz.gui.views.heatmap_data import colourize, quantize

    app = ensure_app()  # noqa: F841 (Qt alive while painting)
    W, H = FALLBACK_SIZE
    side = H - 70  # the map's square, under the title and above the axis notes
    pooled, rs, cs = trace.pooled_probs(state.layer, state.part, state.head, max_rows=side, max_cols=side)
    rgba = np.ascontiguousarray(colourize(quantize(pooled, 1.0), colour_lut(style)))  # (rows, cols, 4)
    tile = QImage(rgba.data, rgba.shape[1], rgba.shape[0], 4 * rgba.shape[1], QImage.Format.Format_RGBA8888)
    _, tq, tk = trace.probs_shape(state.layer, state.part)
    P = next(p for p in meta["parts"] if p["part"] == state.part)
    canvas = QImage(W, H, QImage.Format.Format_RGB32)
    canvas.fill(QColor(style.background))
    painter = QPainter(canvas)
    try:
        painter.setPen(QColor(style.foreground))
        painter.setFont(style.font(1.1))
        title = (f"Layer {state.layer} · head {state.head} · {P['name']} · each pixel the largest of "
                 f"{rs}×{cs} weights")
        painter.drawText(QRectF(0, 4, W, 24), Qt.AlignmentFlag.AlignHCenter, title)
        x0, y0 = (W - side) / 2, 34
        painter.drawImage(QRectF(x0, y0, side, side), tile)  # nearest: a pooled pixel stays one block
        painter.setFont(style.font(0.9))
        painter.drawText(QRectF(x0, y0 + side + 2, side, 18), Qt.AlignmentFlag.AlignHCenter,
                         f"keys 0–{tk - 1:,} →   (queries 0–{tq - 1:,} top to bottom)")
        bar = colourize(np.arange(254, -1, -1, dtype=np.uint8)[:, None], colour_lut(style))  # (255, 1, 4) top = 1
        bar = np.ascontiguousarray(bar)
        bar_img = QImage(bar.data, 1, 255, 4, QImage.Format.Format_RGBA8888)
        bx = x0 + side + 24
        painter.drawImage(QRectF(bx, y0, 14, side), bar_img)
        painter.drawText(QRectF(bx + 18, y0 - 6, 60, 16), Qt.AlignmentFlag.AlignLeft, "1")
        painter.drawText(QRectF(bx + 18, y0 + side - 10, 60, 16), Qt.AlignmentFlag.AlignLeft, "0")
    finally:
        painter.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    canvas.save(buf, "PNG")
    buf.close()
    return (bytes(data), W, f"attnviz figure: head map of layer {state.layer}, head {state.head}, {P['name']}, "
                            f"max-pooled {rs}×{cs} (a still picture)")
