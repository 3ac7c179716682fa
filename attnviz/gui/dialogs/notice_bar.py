"""A visible, non-blocking message strip: truncation notices, bad inputs, models that fail to load.

Never a modal dialog and never a traceback: the lecturer reads one line, closes it or just keeps
working, and the app keeps showing what it had. When the error has more to say (``details``: every
mismatching weight of a model folder, say), a Details… button opens the full text, selectable and
copyable, in a window that does not block the app.

In the main window the strip floats (:meth:`NoticeBar.float_over`) in the empty end of the tab bar's
row (or, when its text would wrap there, along the bottom edge) rather than taking a row of the layout: a notice coming or going used to change the height of
the views area, and every visible view re-laid out (a 30–250 ms freeze, and the views jumped).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFrame, QHBoxLayout, QLabel, QPlainTextEdit,
                               QSizePolicy, QTabBar, QToolButton, QVBoxLayout, QWidget)

__all__ = ["NoticeBar", "LEVELS", "DetailsDialog"]

# background, text: readable on light and dark themes alike (the strip brings its own colours)
LEVELS = {
    "info": ("#dbe9f7", "#0b2e4f"),
    "warning": ("#fbe7b5", "#4a3300"),
    "error": ("#f6cfcf", "#5c0a0a"),
}
INFO_SECONDS = 8  # info notices fade on their own; warnings and errors stay until replaced or closed
MIN_BESIDE_WIDTH = 360  # narrower than this beside the tabs, the strip goes under the tab bar instead


class DetailsDialog(QDialog):
    """The full text of a notice: read-only, selectable, with a Copy button; not modal."""

    def __init__(self, summary: str, details: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Details")
        self.setModal(False)
        head = QLabel(summary, self)
        head.setWordWrap(True)
        head.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)  # read-only still selects and copies (Ctrl+A, Ctrl+C)
        self.text.setPlainText(details)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        copy.setToolTip("copy the whole text to the clipboard")
        copy.clicked.connect(self.copy)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)
        self.resize(720, 420)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())


class NoticeBar(QFrame):
    """One line of text with a close button; ``show_notice(text, level, details)`` replaces the current
    one (a Details… button when ``details`` says more than the line)."""

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
        self.details_button = QToolButton(self)
        self.details_button.setText("Details…")
        self.details_button.setObjectName("NoticeDetails")
        self.details_button.setToolTip("the full text of this problem, to read or copy")
        self.details_button.clicked.connect(self.show_details)
        self.details_button.hide()
        self.details = ""
        self.dialog: DetailsDialog | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 1, 4, 1)  # one line fits in the tab bar's row (26 px)
        lay.addWidget(self._label, 1)
        lay.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        lay.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.level = ""
        self._host: QWidget | None = None
        self._beside: QTabBar | None = None
        self.hide()

    # -- floating over the window (no layout row of its own) ----------------------------------------
    def float_over(self, host: QWidget, beside: QTabBar | None = None) -> None:
        """Float over the top edge of ``host`` instead of sitting in a layout.

        The strip is a raised child of ``host``, placed in the free end of ``beside``'s row (right of
        the last tab, where nothing is drawn) when its text fits there on one line; a longer text wraps
        along the host's bottom edge instead, so it never covers a row of tabs. Showing, replacing or
        closing a notice resizes nothing else.
        """
        self.setParent(host)
        self._host, self._beside = host, beside
        # placed again when the host is resized and whenever a notice is shown; only while one shows
        host.installEventFilter(self)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False

    def floating_rect(self) -> QRect:
        """Where the strip goes in its host (an empty rect when it does not float): in the free end of the tab
        bar's row when the text fits there on one line; else along the host's bottom edge, wrapping at its
        full width. Wrapped beside the tabs (or under them) it grew down over the views' own tab row."""
        host = self._host
        if host is None:
            return QRect()
        margin = 2
        width = max(1, host.width() - 2 * margin)
        bar = self._beside
        if bar is not None and bar.isVisible() and bar.count():
            last = bar.tabRect(bar.count() - 1)
            end = bar.mapTo(host, last.topRight()).x() + 12
            beside = host.width() - margin - end
            one_line = self.heightForWidth(100000)  # the strip's height when nothing wraps
            # in the row, not a pixel below it: the views' own tab row starts right under the tab bar
            if beside >= MIN_BESIDE_WIDTH and self.heightForWidth(beside) <= one_line <= bar.height():
                return QRect(end, bar.mapTo(host, bar.rect().topLeft()).y(), beside, bar.height())
        height = max(self.minimumSizeHint().height(), self.heightForWidth(width))
        return QRect(margin, max(margin, host.height() - margin - height), width, height)

    def _place(self) -> None:
        if self._host is None:
            return
        rect = self.floating_rect()
        if rect != self.geometry():
            self.setGeometry(rect)
        if self.isVisible():
            self.raise_()

    @property
    def text(self) -> str:
        return self._label.text()

    def show_notice(self, text: str, level: str = "warning", details: str = "") -> None:
        """Show ``text`` (one line, plain) at ``level`` "info", "warning" or "error"; ``details`` (the
        long version) behind a Details… button, shown only when it says more than ``text``."""
        bg, fg = LEVELS.get(level, LEVELS["warning"])
        self.level = level
        self.setStyleSheet(f"#NoticeBar {{ background: {bg}; border-radius: 4px; border: 1px solid {fg}40; }}"
                           f"#NoticeBar QLabel, #NoticeBar QToolButton {{ color: {fg}; background: transparent; }}"
                           # the strip's own colours on either theme: a dark theme's button face hid the text
                           f"#NoticeBar QToolButton {{ border: 1px solid transparent; border-radius: 3px;"
                           f" padding: 1px 5px; }}"
                           f"#NoticeBar QToolButton#NoticeDetails {{ border-color: {fg}80; }}"
                           f"#NoticeBar QToolButton:hover {{ background: {fg}20; }}")
        prefix = {"error": "Problem: ", "warning": "Note: "}.get(level, "")
        self._label.setText(prefix + text)
        self._label.setToolTip(text)
        self.details = details if details and details.strip() != str(text).strip() else ""
        self.details_button.setVisible(bool(self.details))
        self.show()
        self._place()  # the new text's height, on top of the views
        if level == "info":
            self._timer.start(INFO_SECONDS * 1000)
        else:
            self._timer.stop()

    def show_details(self) -> None:
        """Open (or bring forward) the window with the notice's full text."""
        if not self.details:
            return
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        self.dialog = DetailsDialog(self._label.text(), self.details, self.window())
        self.dialog.show()
        self.dialog.raise_()

    def dismiss(self) -> None:
        self._timer.stop()
        self.details = ""
        self.details_button.hide()
        self.level = ""
        self._label.clear()
        self.hide()
        self.closed.emit()
