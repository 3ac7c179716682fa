"""The application's light and dark palettes (Qt only: the views' colours are in ``style.py``).

Apart from ``app.py`` so that the window can switch theme without importing the module that
creates it (``app`` → ``main_window`` → ``window.pages`` → ``theme``, no way back).
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

__all__ = ["apply_theme"]


def _dark_palette() -> QPalette:
    pal = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#26272b", QPalette.ColorRole.WindowText: "#e8e8e8",
        QPalette.ColorRole.Base: "#1b1b1f", QPalette.ColorRole.AlternateBase: "#303136",
        QPalette.ColorRole.Text: "#e8e8e8", QPalette.ColorRole.Button: "#303136",
        QPalette.ColorRole.ButtonText: "#e8e8e8", QPalette.ColorRole.Highlight: "#4c7bd9",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#303136",
        QPalette.ColorRole.ToolTipText: "#e8e8e8", QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.Mid: "#55565c", QPalette.ColorRole.PlaceholderText: "#9a9aa0",
    }
    for role, colour in colours.items():
        pal.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#808086"))
    return pal


def apply_theme(app: QApplication, theme: str) -> None:
    """"light" (Fusion's own palette), "dark", or "system" (whichever the desktop's colour scheme asks for)."""
    if theme == "system":
        from attnviz.gui.settings import system_theme

        theme = system_theme()
    app.setPalette(_dark_palette() if theme == "dark" else app.style().standardPalette())
