"""Qt set-up for exporting without a display (CLI, batch jobs)."""

from __future__ import annotations

import os
import sys

from attnviz.errors import AttnvizError

__all__ = ["ensure_app", "export_style"]


def ensure_app():
    """The running QApplication, or a new one on the off-screen platform unless the user chose one."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(sys.argv[:1])


def export_style(theme: str = "light", colormap: str = "viridis", colour_bar: bool = True, font_scale: float = 1.0):
    """The ViewStyle of an exported figure: light for slides by default, whatever the app's theme."""
    import pyqtgraph as pg

    from attnviz.gui.style import PRESETS

    base = PRESETS["default" if theme == "light" else theme]
    if colormap not in pg.colormap.listMaps():
        raise AttnvizError(f"unknown colour map {colormap!r} (try viridis, cividis, inferno, magma, plasma)")
    return base.with_(cmap=colormap, colour_bar=colour_bar, font_scale=base.font_scale * font_scale)
