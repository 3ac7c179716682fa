"""A visible, non-blocking message strip: truncation notices, bad inputs, models that fail to load.

Never a modal dialog and never a traceback: the lecturer reads one line, closes it or just keeps
working, and the app keeps showing what it had.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton

__all__ = ["NoticeBar", "LEVELS"]

# background, text: readable on light and dark themes alike (the strip brings its own colours)
LEVELS = {
    "info": ("#dbe9f7", "#0b2e4f"),
    "warning": ("#fbe7b5", "#4a3300"),
    "error": ("#f6cfcf", "#5c0a0a"),
}
INFO_SECONDS = 8  # info notices fade on their own; warnings and errors stay until replaced or closed


class NoticeBar(QFrame):
    """One line of text with a close button; ``show_notice(text, level)`` replaces the current one."""

    closed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("NoticeBar")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._label = QLabel(self)
        self._label.setWordWrap(True)
        # a word-wrapped label asks for a width that suits its text; in the window's layout that request
        # widened the whole window for some messages (issue 14): take the width the window has instead
        self._label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._label.setMinimumWidth(1)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._close = QToolButton(self)
        self._close.setText("✕")
        self._close.setAutoRaise(True)
        self._close.setToolTip("Dismiss this notice")
        self._close.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self._label, 1)
        lay.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.level = ""
        self.hide()

    @property
    def text(self) -> str:
        return self._label.text()

    def show_notice(self, text: str, level: str = "warning") -> None:
        """Show ``text`` (one line, plain) at ``level`` "info", "warning" or "error"."""
        bg, fg = LEVELS.get(level, LEVELS["warning"])
        self.level = level
        self.setStyleSheet(f"#NoticeBar {{ background: {bg}; border-radius: 4px; }}"
                           f"#NoticeBar QLabel, #NoticeBar QToolButton {{ color: {fg}; }}")
        prefix = {"error": "Problem: ", "warning": "Note: "}.get(level, "")
        self._label.setText(prefix + text)
        self._label.setToolTip(text)
        self.show()
        if level == "info":
            self._timer.start(INFO_SECONDS * 1000)
        else:
            self._timer.stop()

    def dismiss(self) -> None:
        self._timer.stop()
        self.level = ""
        self._label.clear()
        self.hide()
        self.closed.emit()
