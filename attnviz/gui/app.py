"""Start the Qt application and show the main window.

Start-up is kept light on purpose (goal: window on screen within a second on two cores): only
QtCore/QtGui/QtWidgets are imported before the first paint; torch, pyqtgraph and the model are
loaded afterwards by ``MainWindow.start`` (what runs where, and why: :mod:`attnviz.gui.startup`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication

from attnviz.gui.theme import apply_theme
from attnviz.io.assets import icon_path

__all__ = ["run_app", "create_application", "apply_theme"]

APP_NAME = "attnviz"
SWITCH_INTERVAL_S = 0.001


def create_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication (created once): name, Fusion style, icon, exact high-DPI scaling."""
    app = QApplication.instance()
    if app is None:
        # fractional scale factors (125 %, 150 %) as they are: rounding would blur or shrink figures
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(argv if argv is not None else sys.argv[:1])
    # Workers run Python too (training steps, imports). With CPython's default 5 ms switch interval a
    # busy worker makes the GUI thread wait up to 5 ms each time it needs the GIL back, and drawing a
    # plot needs it hundreds of times: 1 ms keeps painting smooth while a model trains.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName(APP_NAME)
    # the same look on every platform, and palettes that theme cleanly. Set once: setting it again re-polishes every
    # widget alive, and after a causal-mask figure had been laid out for an export (its square-cell maps in a
    # grid) that pass crashed inside Qt's grid layout engine (a test creating its window after such a test)
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    icon = icon_path()
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def run_app(args) -> int:
    """Open the window (``attnviz`` / ``attnviz gui``); returns the exit code."""
    from attnviz.gui.window.main_window import MainWindow
    from attnviz.gui.settings import AppSettings

    app = create_application()
    settings = AppSettings()
    apply_theme(app, settings.theme)
    win = MainWindow(settings, model=getattr(args, "model", None), text=getattr(args, "text", None),
                     image=getattr(args, "image", None),
                     presentation=True if getattr(args, "presentation", False) else None,
                     dtype=getattr(args, "dtype", "auto"))
    if getattr(args, "scene", None):
        from attnviz.gui.window.scene_actions import open_scene_at_start

        open_scene_at_start(win, args.scene)
    win.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    win.show()  # the window starts loading the model after its first paint
    if getattr(args, "plan", None) is not None:  # `attnviz PATH…`: traces and other files
        from attnviz.gui.open_paths import open_paths

        open_paths(win, args.plan)
    code = app.exec()
    # background imports may still run: drop queued jobs and give running ones a moment, so the
    # interpreter does not shut down under a worker thread (that only prints noise, but still)
    from attnviz.gui.workers import wait_for_workers

    wait_for_workers(5000)
    return code
