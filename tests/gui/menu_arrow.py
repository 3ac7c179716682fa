"""How far a menu button's centred text keeps from the arrow the style draws at its right edge."""

from __future__ import annotations

from PySide6.QtWidgets import QStyle


def clear_of_arrow(button) -> float:
    """Pixels between the end of the centred text and the arrow drawn at the right edge (negative: overlap)."""
    text_end = (button.width() + button.fontMetrics().horizontalAdvance(button.text())) / 2
    arrow = button.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, None, button)
    return button.width() - arrow - 2 - text_end
