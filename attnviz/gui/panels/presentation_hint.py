"""A short line over the presented figure: how to leave presentation mode, and that Page Down has reached
the last step. Presentation hides the menus and the status bar, so without it a lecturer who pressed F5
has nothing on screen that says how to get back, and a clicker that stops at the last step looks broken."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["PresentationHint", "LEAVE_TEXT", "leave_text", "step_position"]

LEAVE_TEXT = "Presenting · Esc or F5: back to the app · Page Down / Page Up: next / previous step"


def leave_text(has_steps: bool) -> str:
    """The hint on entering: Page Down / Page Up only for a figure that has steps."""
    return LEAVE_TEXT if has_steps else LEAVE_TEXT.split(" · Page Down")[0]
SHOWN_MS = 4000


class PresentationHint(QLabel):
    """A rounded label centred near the bottom of ``win``; :meth:`flash` shows it for a few seconds."""

    def __init__(self, win: QWidget):
        super().__init__(win)
        self.setObjectName("presentation_hint")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # clicks reach the figure
        self.setStyleSheet("QLabel#presentation_hint { background: rgba(30, 30, 30, 215); color: white;"
                           " border-radius: 8px; padding: 10px 22px; }")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def flash(self, text: str, ms: int = SHOWN_MS) -> None:
        if not shiboken6.isValid(self):
            return
        self.setText(text)
        font = self.parentWidget().font()  # the (presentation) application font, a step larger
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.setFont(font)
        self.adjustSize()
        self.place()
        self.show()
        self.raise_()
        self._timer.start(ms)

    def place(self) -> None:
        # the top right corner: titles are centred or left, axis labels and captions are at the bottom
        # (centred near the bottom it covered the x-axis labels and the caption for its first seconds)
        win = self.parentWidget()
        self.move(max(0, win.width() - self.width() - 12), 12)


def step_position(fig) -> tuple[int, int] | None:
    """(current, count) of a step-by-step figure — a lesson's scenes, the walkthrough's steps, the matrix
    form's parts — or None for a figure without steps."""
    if hasattr(fig, "lesson") and hasattr(fig, "index"):
        return fig.index, len(fig.lesson.scenes)
    slider = getattr(fig, "slider", None)
    if slider is not None:
        return slider.value(), slider.maximum() + 1
    box = getattr(fig, "section_box", None)
    if box is not None:
        return box.currentIndex(), box.count()
    return None
