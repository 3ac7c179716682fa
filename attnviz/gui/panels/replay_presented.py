"""The Training replay's controls (probe, layer, head, colours, the step slider and its label) and a run's progress
and status at a size the back row reads while the Training tab is presented (F5).

They follow the application font, which presenting enlarges less than the views' type: at 1920×1080 they stayed
~12 px under 25 px axis labels (a group box's style sheet around them even kept them at the desk size), and the
slider a 15 px strip (issue 36). Presented, each gets a font of :data:`CONTROL_SHARE` of the figure's type and at
least :data:`MIN_PRESENTED_PX` pixels, and the slider a groove and handle of that size; docked, all of it goes back
to following the application.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLineEdit, QSlider, QWidget

__all__ = ["CONTROL_SHARE", "MIN_PRESENTED_PX", "present_replay_controls", "presented_px"]

CONTROL_SHARE = 0.8  # of the figure's axis-label size: controls a step below the figure they steer
MIN_PRESENTED_PX = 16  # the smallest control text read from the back row (a 1280×720 projector)


def presented_px(style, widget: QWidget) -> int:
    """The controls' text height in pixels for the presented ``style`` on ``widget``'s screen."""
    screen = widget.screen()
    dpi = screen.logicalDotsPerInch() if screen is not None else 96.0
    return max(MIN_PRESENTED_PX, round(style.font_pt() * dpi / 72.0 * CONTROL_SHARE))


def _controls(timeline) -> list[QWidget]:
    """The timeline's own widgets but its map (the rows above and below it), and their parts: a spin box draws its
    text in its line edit, whose font a group box's style sheet had frozen at the desk size (12 px presented)."""
    view = timeline.view
    # every widget outside the map, however nested (the controls stand in a wrapping row, caption and box paired)
    own = [w for w in timeline.findChildren(QWidget) if w is not view and not view.isAncestorOf(w)
           and not isinstance(w, QLineEdit)]
    return own + [part for w in own for part in w.findChildren(QLineEdit, options=Qt.FindChildOption.FindDirectChildrenOnly)]


def present_replay_controls(timeline, style, presenting: bool, also=()) -> None:
    """Size ``timeline``'s controls and the widgets ``also`` (a run's progress bar and status line, on screen while
    presenting) for ``style`` while ``presenting``; else give them back the application's."""
    px = presented_px(style, timeline) if presenting and style is not None else None
    for w in _controls(timeline) + list(also):
        if px is None:
            w.setFont(QFont())  # an empty resolve mask: the widget follows the application font again
        else:
            font = QFont(w.font())
            font.setPixelSize(px)
            w.setFont(font)
        if isinstance(w, QSlider):
            w.setStyleSheet(_slider_sheet(px) if px else "")
            w.setMinimumHeight(_handle_px(px) + 2 if px else 0)  # its size hint ignores the sheet's handle


def _slider_sheet(px: int) -> str:
    """A groove a third of the text's height and a round handle as tall as the text line (Qt's default drew a
    15 px strip whatever the type)."""
    groove, handle = max(4, px // 3), _handle_px(px)
    return (f"QSlider::groove:horizontal {{ height: {groove}px; background: palette(mid); "
            f"border-radius: {groove // 2}px; }}"
            f"QSlider::sub-page:horizontal {{ background: palette(highlight); border-radius: {groove // 2}px; }}"
            f"QSlider::handle:horizontal {{ width: {handle}px; margin: -{(handle - groove) // 2}px 0; "
            f"background: palette(button); border: 1px solid palette(dark); border-radius: {handle // 2}px; }}")


def _handle_px(px: int) -> int:
    return round(px * 1.2)
