"""The smallest label a figure may draw: what the back row of a lecture hall still reads.

12 px on a 1920×1080 projection. Presenting (large type), the figure is on the projected screen itself:
12 px on a 1080-line window, in proportion on a smaller one (a 1280×720 projector fills the same wall, so
8 px there is as large in the room as 12 px at 1080 lines). Not presenting, the floor is 5 pt: on a desk
screen that is small but readable up close, and an export of a 1920×1080 slide (laid out at 1067×600,
drawn ×1.8) makes it 12 px.
"""

from __future__ import annotations

__all__ = ["floor_pt", "EXPORT_FLOOR_PT", "PRESENTED_FLOOR_PT"]

EXPORT_FLOOR_PT = 5.0
PRESENTED_FLOOR_PT = 9.0  # 12 px at 96 dpi
FULL_HD_LINES = 1080.0


def floor_pt(style, widget=None) -> float:
    """Points of the smallest label for ``style``, drawn in ``widget`` (its window's height scales the
    presenting floor; without a widget, a 1080-line screen)."""
    if style.font_scale <= 1:
        return EXPORT_FLOOR_PT
    lines = FULL_HD_LINES
    if widget is not None:
        win = widget.window()
        if win is not None and win.height() > 0:
            lines = win.height()
    return PRESENTED_FLOOR_PT * min(1.0, max(2.0 / 3.0, lines / FULL_HD_LINES))
