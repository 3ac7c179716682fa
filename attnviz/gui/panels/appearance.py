"""Theme, presentation mode and colour map → one ViewStyle for every view, and the panels' font."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

__all__ = ["compose_style", "presentation_font", "screen_share", "PRESENTATION_FONT_SCALE", "PRESENTATION_VIEW_SCALE",
           "placeholder_page", "fill_page"]

PRESENTATION_FONT_SCALE = 1.5  # panels and menus
# the views' type presenting on a 1080-line screen: 9 pt × 2.1 = 25 px labels, read from a lecture hall's
# back row (issue 28: the export preset's 1.7 gave ~20 px, ~1.3× the desk size to the eye); exports keep
# the presentation preset's own scale (their 1067×600 layout is drawn ×1.8 already)
PRESENTATION_VIEW_SCALE = 2.1


def screen_share(lines: float | None) -> float:
    """How large presentation type is on a screen of ``lines`` pixel rows, relative to 1080: a 1280×720
    projector fills the same wall as a 1920×1080 one, so the same share of its height is the same size in
    the room (at 1080 lines' point sizes a 720-line slide had no room left for its figure). 2/3..1."""
    if not lines or lines <= 0:
        return 1.0
    return min(1.0, max(2.0 / 3.0, lines / 1080.0))


def compose_style(theme: str, presentation: bool, cmap: str, lines: float | None = None):
    """The ViewStyle for ``theme`` ("light"/"dark"), presentation mode on/off and colour map ``cmap``;
    presenting, type is in proportion to the screen's ``lines`` (see :func:`screen_share`)."""
    from attnviz.gui.style import PRESETS

    style = PRESETS["dark"] if theme == "dark" else PRESETS["default"]
    if presentation:
        p = PRESETS["presentation"]
        style = style.with_(font_scale=round(PRESENTATION_VIEW_SCALE * screen_share(lines), 3), line_width=p.line_width,
                            preset="presentation")
    return style.with_(cmap=cmap)


def presentation_font(base: QFont, on: bool, lines: float | None = None) -> QFont:
    """The application font: ``base``, or enlarged for the back row of a lecture hall (in proportion to
    the screen's ``lines``, see :func:`screen_share`)."""
    font = QFont(base)
    if on:
        font.setPointSizeF(base.pointSizeF() * max(1.0, PRESENTATION_FONT_SCALE * screen_share(lines)))
    return font


def placeholder_page(text: str, parent=None) -> QWidget:
    """A tab page saying what will appear there; :func:`fill_page` swaps in the real widget."""
    page = QWidget(parent)
    label = QLabel(text, page)
    label.setWordWrap(True)
    QVBoxLayout(page).addWidget(label)
    return page


def fill_page(page: QWidget, widget: QWidget) -> None:
    """Replace the placeholder of ``page`` by ``widget``."""
    lay = page.layout()
    while lay.count():
        old = lay.takeAt(0).widget()
        if old is not None:
            old.deleteLater()
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(widget)
