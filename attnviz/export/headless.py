"""Qt set-up for exporting without a display (CLI, batch jobs).

The style of an exported figure is :func:`attnviz.figures.registry.export_style` (the app's Export…
dialog uses it too, and the GUI never imports this package).
"""

from __future__ import annotations

import os
import sys

__all__ = ["ensure_app"]


def ensure_app():
    """The running QApplication, or a new one on the off-screen platform unless the user chose one."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(sys.argv[:1])
