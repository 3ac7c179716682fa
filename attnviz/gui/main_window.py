"""The main window's old address: it lives in :mod:`attnviz.gui.window.main_window` now (kept so scripts
and branches written before the move still import it)."""

from attnviz.gui.window.main_window import FALLBACK_TEXT, MainWindow

__all__ = ["MainWindow", "FALLBACK_TEXT"]
