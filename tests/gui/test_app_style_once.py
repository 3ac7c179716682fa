"""create_application sets the Fusion style once: a second call (a test's window after another's figures) keeps
the style object, so no widget alive is re-polished (that pass crashed inside Qt's grid layout engine after a
causal-mask figure had been laid out for an export: tests/gui/test_lesson_panels_export.py then a window test)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def test_a_second_call_keeps_the_style(qapp):
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.app import create_application

    create_application()
    style = QApplication.style()
    assert style.name().lower() == "fusion"
    create_application()
    assert QApplication.style() is style  # the old code set a new Fusion style object every call
