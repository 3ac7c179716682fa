"""Text written inside matrix cells as outlines in cell units (the causal mask's "0" and "−∞"), sized so it
grows with its cell. "−∞" is composed: in a font the minus is as wide as the ∞, so fitted to a cell the ∞
came out a third of the cell wide and a fifth tall, and the pair read as a dash; a half-width minus and
the ∞ filling the rest make the ∞ ~1.5× larger."""

from __future__ import annotations

from PySide6.QtGui import QFont, QPainterPath, QTransform

__all__ = ["glyph_outline", "cell_scale", "MAX_H", "MAX_W"]

MAX_H, MAX_W = 0.5, 0.8  # the text's box in cell units: half a cell high, four fifths wide at most (a gap to the next cell's)
_MINUS_WIDTH = 0.5  # the minus of "−∞" at half its width in the font (its stroke keeps its thickness)


def _font() -> QFont:
    font = QFont()
    font.setBold(True)
    font.setPixelSize(100)
    return font


def glyph_outline(text: str) -> QPainterPath:
    """``text`` as an outline at 100 px, a leading "−" shortened so the rest (∞) gets the cell's width."""
    font = _font()
    if not (text.startswith("−") and len(text) > 1):
        path = QPainterPath()
        path.addText(0.0, 0.0, font, text)
        return path
    minus, rest = QPainterPath(), QPainterPath()
    minus.addText(0.0, 0.0, font, "−")
    rest.addText(0.0, 0.0, font, text[1:])
    mb, rb = minus.boundingRect(), rest.boundingRect()
    squeeze = QTransform()
    squeeze.translate(mb.left(), 0.0)
    squeeze.scale(_MINUS_WIDTH, 1.0)
    squeeze.translate(-mb.left(), 0.0)
    minus = squeeze.map(minus)
    gap = 0.12 * rb.height()
    shift = QTransform()
    shift.translate(minus.boundingRect().right() + gap - rb.left(), 0.0)
    out = QPainterPath(minus)
    out.addPath(shift.map(rest))
    return out


def cell_scale(box) -> float:
    """Cell units per outline pixel for a text whose outline box is ``box``: as large as fits MAX_H × MAX_W."""
    return min(MAX_H / box.height(), MAX_W / box.width())
