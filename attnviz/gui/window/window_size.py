"""The window's first size, before the user has chosen one (a saved geometry wins)."""

from __future__ import annotations

__all__ = ["default_size"]


def default_size() -> tuple[int, int]:
    """Most of the screen, up to 1920 × 1080: a 1920 × 1080 lecture screen gets ~1824 × 966, so the
    model list's columns and the right dock's tabs fit; a 1366 × 768 laptop gets a window that fits;
    a larger screen does not get a window wider than the figures are laid out for."""
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return 1440, 900
    avail = screen.availableGeometry()
    return min(1920, int(avail.width() * 0.95)), min(1080, int(avail.height() * 0.92))
