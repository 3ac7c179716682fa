"""The status bar while a figure export runs: what it is doing and a Cancel button.

An export of a long input's All heads page waits seconds for its heads (computed on the views' lane, see
:mod:`attnviz.gui.views.export_wait`); the window keeps answering, the status bar says how far the heads are
("computing heads 12/36 for the export…") and Cancel stops it (no file is written). A quick export shows its
"Exporting the figure…" and the button for a moment only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

__all__ = ["show_export_busy", "show_export_progress", "cancel_button"]


def cancel_button(win) -> QPushButton:
    """The status bar's Cancel of a running export (made on first use, hidden while none runs)."""
    button = getattr(win, "export_cancel_button", None)
    if button is None:
        button = QPushButton("Cancel export")
        button.setToolTip("stop the figure export: its heads stop being computed and no file is written")
        button.clicked.connect(lambda: _cancel(win))
        button.hide()
        win.statusBar().addPermanentWidget(button)
        win.export_cancel_button = button
    return button


def _cancel(win) -> None:
    runner = win.figure_export
    if runner is not None and runner.busy:
        runner.cancel()
        # past its last step the file is being written (a moment): it still lands, and its notice follows
        if not runner.busy:
            win.notify("export cancelled: no file was written", "info")


def show_export_busy(win, busy: bool) -> None:
    """The cursor, the status bar's message and the Cancel button as an export starts (``busy``) or ends."""
    cancel_button(win).setVisible(busy)
    if busy:
        win.setCursor(Qt.CursorShape.BusyCursor)  # busy, yet still answering (the window's own: it goes with it)
        win.statusBar().showMessage("Exporting the figure…")
    else:
        win.unsetCursor()
        win.statusBar().clearMessage()


def show_export_progress(win, text: str) -> None:
    """What the export is computing, in the status bar until the next message."""
    win.statusBar().showMessage(text)
