"""The smallest label a figure may draw: what the back row of a lecture hall still reads.

12 px on a 1920×1080 projection. Three cases:

* **Docked** (the app's window, not presenting): 9 pt, 12 px at 96 dpi, at every window size. A
  1280×720 desk window is projected as it is, so its labels must be as large as a 1080-line one's.
* **Presenting** (large type): the figure is on the projected screen itself: 12 px on a 1080-line
  window, in proportion on a smaller one (a 1280×720 projector fills the same wall, so 8 px there is as
  large in the room as 12 px at 1080 lines).
* **Exporting** (within :func:`exporting`): the export's own floor, 5 pt in the figure's layout. An
  export of a 1920×1080 slide is laid out at 1067×600 and drawn ×1.8, so 5 pt there is 12 px on the
  slide (a layout at the window's floor would name half the tokens of a slide that has room for all).

Where labels do not fit at the floor, a view names every k-th label or gives the figure more room; it
never draws type under it.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["floor_pt", "exporting", "is_exporting", "EXPORT_FLOOR_PT", "DOCKED_FLOOR_PT", "HELD_FLOOR", "held_floor_pt", "PRESENTED_FLOOR_PT"]

EXPORT_FLOOR_PT = 5.0  # the smallest layout size an export draws (×1.8 on a 1920×1080 slide: 12 px)
DOCKED_FLOOR_PT = 9.0  # 12 px at 96 dpi
HELD_FLOOR = "legible_floor_pt"  # a widget property: the floor its figures keep whatever the screen's size
PRESENTED_FLOOR_PT = 9.0  # 12 px at 96 dpi on a 1080-line screen
FULL_HD_LINES = 1080.0

_exports = [0]  # how many exports are being laid out now (GUI thread only: exports paint widgets)


@contextmanager
def exporting():
    """Within this block figures are laid out for an export (drawn larger: the export's floor)."""
    _exports[0] += 1
    try:
        yield
    finally:
        _exports[0] -= 1


def is_exporting() -> bool:
    """True while a figure is laid out for a file (within :func:`exporting`): what a slide cannot do, e.g.
    page with ▲▼◀▶, its text must not offer."""
    return bool(_exports[0])


def floor_pt(style, widget=None) -> float:
    """Points of the smallest label for ``style``, drawn in ``widget`` (its window's height scales the
    presenting floor; without a widget, a 1080-line screen)."""
    if style.font_scale <= 1:
        return EXPORT_FLOOR_PT if _exports[0] else DOCKED_FLOOR_PT
    lines = FULL_HD_LINES
    if widget is not None:
        win = widget.window()
        if win is not None and win.height() > 0:
            lines = win.height()
    return max(PRESENTED_FLOOR_PT * min(1.0, max(2.0 / 3.0, lines / FULL_HD_LINES)), held_floor_pt(widget))


def held_floor_pt(widget) -> float:
    """The floor a container holds its figures to on screen (its ``legible_floor_pt`` property, e.g. the live
    lesson's 12 px at every screen size, issue 36), else 0; an export keeps its own floor."""
    while widget is not None and not _exports[0]:
        held = widget.property(HELD_FLOOR)
        if held:
            return float(held)
        widget = widget.parentWidget()
    return 0.0
