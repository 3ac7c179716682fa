"""Start the Qt application and show the main window."""

from __future__ import annotations

import sys


def run_app(args) -> int:
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    from attnviz import __version__

    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = QMainWindow()
    win.setWindowTitle(f"attnviz {__version__}")
    win.setCentralWidget(QLabel("attnviz"))
    win.resize(1200, 800)
    win.show()
    return app.exec()
