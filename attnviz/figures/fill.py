"""A deck page's figure grown to use the page.

Views lay themselves out for a dock and cap their own growth (token lines: a row is at most ~2 text lines
apart, the gap between the columns at most a few hundred pixels), so on a 1920 × 1080 slide such a figure
sat in the top-middle of its band with half the page empty (the lesson deck's pages 1–2). Here the figure
is drawn once at a low resolution, its ink measured, and the layout scale raised until the ink fills the
band in one direction (text and lines grow with it: that is what the back row needs); what is left over in
the other direction is split evenly so the figure is centred. A figure that already fills its band is
drawn at the scale it had.

The page is always drawn right after a probe laid out at the same scale: some figures settle in two layout
passes (square-cell maps size their axes from the first pass's geometry), and drawn after one pass the deck's
causal-mask page had three 19 × 19 maps 215, 227 and 253 px wide; after the probe's pass they are equal.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

__all__ = ["ink_rect", "filled_placement", "GROW_FROM", "MAX_GROWTH"]

PROBE = 0.25  # the probe's resolution, a share of the page's: 480 × 240 px for a slide's band is enough
GROW_FROM = 1.1  # a figure within 10 % of filling its band in both directions is left as it is
MAX_GROWTH = 2.5  # at most this much larger than the layout scale the page would use (a near-empty figure
#                   is not blown up to a few huge words)
MARGIN = 0.02  # the ink keeps this share of the band free at its edges (the caption, the title are near)


def ink_rect(widget, body: QRectF, scale: float) -> QRectF | None:
    """Where ``widget.render_figure`` puts ink (anything not its background) in a band of ``body``'s size
    at ``scale``, in the band's own coordinates; None if it draws nothing."""
    w, h = max(8, int(body.width() * PROBE)), max(8, int(body.height() * PROBE))
    image = QImage(w, h, QImage.Format.Format_RGB32)
    style = getattr(widget, "style", None)
    background = QColor(getattr(style, "background", "white"))
    image.fill(background)
    painter = QPainter(image)
    try:
        painter.scale(w / body.width(), h / body.height())
        widget.render_figure(painter, QRectF(0, 0, body.width(), body.height()), scale)
    finally:
        painter.end()
    ptr = image.constBits()
    rgb = np.frombuffer(ptr, np.uint8, count=image.sizeInBytes()).reshape(h, image.bytesPerLine())[:, :w * 4]
    pixels = rgb.reshape(h, w, 4)[:, :, :3].astype(int)
    bg = np.array([background.blue(), background.green(), background.red()])  # Format_RGB32 is BGRA in memory
    ink = np.abs(pixels - bg).sum(axis=2) > 24  # antialiasing halos and faint washes are not the figure's edge
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size == 0:
        return None
    sx, sy = body.width() / w, body.height() / h
    return QRectF(cols[0] * sx, rows[0] * sy, (cols[-1] + 1 - cols[0]) * sx, (rows[-1] + 1 - rows[0]) * sy)


def filled_placement(widget, body: QRectF, scale: float) -> tuple[float, QPointF]:
    """``(layout scale, offset)`` that make ``widget``'s figure fill ``body``: the scale to pass to
    ``render_figure`` and how far to shift the band so the ink is centred. ``(scale, (0, 0))`` for a
    figure that already fills it (or draws nothing)."""
    room_w, room_h = body.width() * (1 - 2 * MARGIN), body.height() * (1 - 2 * MARGIN)
    ink = ink_rect(widget, body, scale)
    if ink is None or min(room_w / ink.width(), room_h / ink.height()) < GROW_FROM:
        return scale, QPointF(0, 0)
    best, best_ink, last = scale, ink, scale
    for _ in range(3):  # the layout is not linear in the scale (labels, floors): converge in a few steps
        grow = min(room_w / best_ink.width(), room_h / best_ink.height())
        if grow < 1.02:
            break
        trial = min(best * grow, scale * MAX_GROWTH)
        if trial <= best * 1.001:
            break
        trial_ink = ink_rect(widget, body, trial)
        last = trial
        if trial_ink is None or trial_ink.width() > room_w * 1.01 or trial_ink.height() > room_h * 1.01:
            break  # grown past the band: keep the last scale that fitted
        best, best_ink = trial, trial_ink
    if last != best:  # the page is drawn right after a layout at its own scale (see the module's note)
        best_ink = ink_rect(widget, body, best) or best_ink
    offset = QPointF(body.width() / 2 - best_ink.center().x(), body.height() / 2 - best_ink.center().y())
    return best, offset
