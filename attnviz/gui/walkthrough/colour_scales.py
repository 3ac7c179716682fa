"""Colour scales of the walkthrough grids and the one-line legend that states them.

Signed values use a diverging blue–white–red map (ColorBrewer RdBu, colour-blind friendly) with 0 at
white and symmetric limits; probabilities the view's colour map on 0…1. Masked cells are never coloured
as a number: they get the style's masked grey, hatched.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QLinearGradient, QPen

from attnviz.gui.style import ViewStyle, colour_lut
from attnviz.gui.walkthrough.number_format import MINUS
from attnviz.gui.widgets.hatch import draw_hatch

__all__ = ["signed_colours", "colours", "paint_legend", "LEGEND_BAR"]

LEGEND_BAR = 40.0  # shortest colour bar of a legend, pixels

# ColorBrewer RdBu (7 classes), reversed so negative is blue: legible for colour-blind viewers
_DIVERGING = np.array([[33, 102, 172], [103, 169, 207], [209, 229, 240], [247, 247, 247],
                       [253, 219, 199], [239, 138, 98], [178, 24, 43]], dtype=np.float64)


def _diverging_lut(n: int = 255) -> np.ndarray:
    x = np.linspace(0, 6, n)  # the seven anchors spread over n entries
    return np.stack([np.interp(x, np.arange(7), _DIVERGING[:, c]) for c in range(3)], -1).astype(np.uint8)


_SIGNED_LUT = _diverging_lut()


def signed_colours(values: np.ndarray, vmax: float) -> np.ndarray:
    """RGB (…, 3) uint8 of a diverging map: −vmax blue, 0 white, +vmax red (±inf clip to the ends)."""
    scale = 127.0 / vmax if vmax > 0 else 0.0
    with np.errstate(invalid="ignore"):
        idx = np.clip(np.asarray(values, dtype=np.float64) * scale + 127.0, 0, 254)
    return _SIGNED_LUT[np.nan_to_num(idx, nan=127.0).astype(np.int64)]


def colours(values: np.ndarray, kind: str, vmax: float, style: ViewStyle) -> np.ndarray:
    """RGB (…, 3) uint8 of ``values`` on the grid's scale ("prob": colour map on 0…vmax; else diverging)."""
    if kind == "prob":
        lut = colour_lut(style)
        idx = np.clip(np.nan_to_num(np.asarray(values, dtype=np.float64) / (vmax or 1.0)) * 254 + 0.5, 0, 254)
        return lut[idx.astype(np.uint8)][..., :3]
    return signed_colours(values, vmax)


def paint_legend(grid, p, area, font) -> None:
        """One line under the grid: "−2.6 ▬▬▬ 2.6" (a tick marks 0 on signed maps), then "▨ −∞" if masked.

        A grid too narrow for that writes "±2.6" after a short bar instead.
        """
        fm = QFontMetricsF(font)
        lo, hi = grid._legend_texts()
        y = area.bottom() + 0.25 * fm.height()
        x = area.left()
        p.setFont(font)
        p.setPen(QColor(grid.style.foreground))
        room = grid.width() - x - 2
        compact = room < grid._legend_width()
        w_lo = 0.0 if compact else fm.horizontalAdvance(lo)
        if compact:
            hi = hi if grid.kind == "prob" else "±" + hi
        else:
            p.drawText(QRectF(x, y, w_lo + 2, fm.height()), int(Qt.AlignLeft | Qt.AlignVCenter), lo)
        w_hi = fm.horizontalAdvance(hi)
        masked = not np.isfinite(grid.values).all()
        # the "▨ −∞" key after the bar must stay inside the grid (a wide map's cells reach its right edge)
        key = fm.height() + 20 + fm.horizontalAdvance(f"{MINUS}∞") if masked and not compact else 0.0
        bar_w = max(12.0, min(room - w_lo - w_hi - 12, 140)) if compact else \
            max(LEGEND_BAR, min(area.width() - w_lo - w_hi - 12, room - w_lo - w_hi - 12 - key, 140))
        bar = QRectF(x + (w_lo + 5 if w_lo else 0), y + fm.height() * 0.25, bar_w, fm.height() * 0.5)
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        xs = np.linspace(-1, 1, 9) if grid.kind != "prob" else np.linspace(0, 1, 9)
        for t, col in zip(np.linspace(0, 1, 9), colours(xs * grid.vmax, grid.kind, grid.vmax, grid.style)):
            grad.setColorAt(float(t), QColor(*[int(c) for c in col]))
        p.fillRect(bar, grad)
        p.setPen(QPen(QColor(grid.style.foreground), 0.8))
        p.drawRect(bar)
        if grid.kind != "prob":
            cx = bar.center().x()
            p.drawLine(QPointF(cx, bar.top() - 2), QPointF(cx, bar.bottom() + 2))
        p.drawText(QRectF(bar.right() + 5, y, w_hi + 2, fm.height()), int(Qt.AlignLeft | Qt.AlignVCenter), hi)
        if masked and not compact:
            sw = QRectF(bar.right() + w_hi + 16, bar.top(), bar.height() * 2, bar.height())
            p.fillRect(sw, QColor(grid.style.masked))
            draw_hatch(p, sw, QColor(grid.style.foreground), spacing=4, width=0.7)
            p.drawText(QRectF(sw.right() + 4, y, fm.horizontalAdvance(f"{MINUS}∞") + 4, fm.height()),
                       int(Qt.AlignLeft | Qt.AlignVCenter), f"{MINUS}∞")
