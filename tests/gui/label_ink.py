"""A label's size as a measurement of the drawn figure reads it: its letters' ink (issue 36, Deliver 4). Measured here
on its own, not through attnviz.gui.widgets.legible, so the audit does not check the code with itself."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

__all__ = ["ink_px", "label_px", "pt_to_px", "INK_SAMPLE"]


def pt_to_px(pt: float) -> float:
    """Pixels of a ``pt`` point font on this screen (the DPI the views measure at)."""
    screen = QApplication.primaryScreen()
    dpi = screen.logicalDotsPerInch() if screen is not None else 96.0
    return pt * dpi / 72.0


INK_SAMPLE = "bdhkABD0"  # letters up to the ascender line, none below the baseline: a label's tallest ink


def ink_px(font: QFont, scale: float = 1.0) -> float:
    """Pixels the tallest letters of ``font`` ink, drawn ``scale`` times larger (issue 36, Deliver 4: a label's
    size is its letters' height as a measurement of the PNG reads it, not its type: DejaVu's 12-px type inks 10).
    On screen (scale 1) the hinted glyphs' box; on a page the outline's share of the em (a scaled painter draws
    outlines, measured on the exported PNGs: 12-px type inked 10-11 px) times the page's pixels per em."""
    if abs(scale - 1.0) < 1e-6:
        return QFontMetricsF(font).tightBoundingRect(INK_SAMPLE).height()
    big = QFont(font)
    big.setPixelSize(480)
    share = QFontMetricsF(big).tightBoundingRect(INK_SAMPLE).height() / 480.0
    return share * pt_to_px(font.pointSizeF()) * scale


def label_px(font: QFont, scale: float, style) -> tuple[float, str]:
    """A row or column label's size on its target: exported (within ``exporting``) or presented (large type) the
    letters' ink (:func:`ink_px`, issue 36 Deliver 4); docked the type, as docked views still hold it (a T×T map's
    and a token axis' 9-pt labels ink 10 px there: known gap). With the verb a message says it in."""
    from attnviz.gui.widgets.legible import is_exporting

    if is_exporting() or style.font_scale > 1:
        return ink_px(font, scale), "ink"
    return pt_to_px(font.pointSizeF()) * scale, "are"
