"""Theme, presentation mode and colour map → one ViewStyle for every view, and the panels' font."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

__all__ = ["compose_style", "presentation_font", "PRESENTATION_FONT_SCALE", "placeholder_page", "fill_page"]

PRESENTATION_FONT_SCALE = 1.5  # panels and menus; the views use the presentation preset's own scale


def compose_style(theme: str, presentation: bool, cmap: str):
    """The ViewStyle for ``theme`` ("light"/"dark"), presentation mode on/off and colour map ``cmap``."""
    from attnviz.gui.style import PRESETS

    style = PRESETS["dark"] if theme == "dark" else PRESETS["default"]
    if presentation:
        p = PRESETS["presentation"]
        style = style.with_(font_scale=p.font_scale, line_width=p.line_width, preset="presentation")
    return style.with_(cmap=cmap)


def presentation_font(base: QFont, on: bool) -> QFont:
    """The application font: ``base``, or enlarged for the back row of a lecture hall."""
    font = QFont(base)
    if on:
        font.setPointSizeF(base.pointSizeF() * PRESENTATION_FONT_SCALE)
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
