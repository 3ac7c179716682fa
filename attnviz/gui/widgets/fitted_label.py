"""A word-wrapped label of a fixed number of lines that shortens its text (in the middle, where a folder
path is) instead of cutting a line off at the top or bottom; the whole text is its tooltip and ``text()``."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QLabel

__all__ = ["FittedLabel", "fit_text"]


def fit_text(text: str, fm, width: int, lines: int) -> str:
    """``text`` as it fits ``lines`` wrapped lines of ``width`` px in font metrics ``fm``: whole if it fits,
    else elided in the middle to the longest version that does."""
    def height(t: str) -> int:
        return fm.boundingRect(QRect(0, 0, max(1, width), 1 << 20), Qt.TextFlag.TextWordWrap, t).height()

    room = lines * fm.lineSpacing()
    if width <= 0 or height(text) <= room:
        return text
    lo, hi = 0, lines * width  # elided one-line widths: lo fits (an empty text does), hi does not
    while hi - lo > 4:
        mid = (lo + hi) // 2
        if height(fm.elidedText(text, Qt.TextElideMode.ElideMiddle, mid)) <= room:
            lo = mid
        else:
            hi = mid
    return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, lo)


class FittedLabel(QLabel):
    """A status line of ``lines`` lines: a fixed height (a growing label re-laid out the plots on every
    update), its text shortened to fit it; the training status's folder path took a third line that was cut."""

    def __init__(self, lines: int = 2, parent=None):
        super().__init__("", parent)
        self._lines = lines
        self._full = ""
        self.setWordWrap(True)
        self.setFixedHeight(lines * self.fontMetrics().lineSpacing() + 4)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text
        self._fit()

    def text(self) -> str:
        """The whole text (what is drawn may be shortened: :meth:`shown_text`)."""
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def shown_text_for(self, width: int) -> str:
        return fit_text(self._full, self.fontMetrics(), width, self._lines)

    def _fit(self) -> None:
        shown = self.shown_text_for(self.contentsRect().width())
        self.setToolTip(self._full if shown != self._full else "")
        super().setText(shown)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self.setFixedHeight(self._lines * self.fontMetrics().lineSpacing() + 4)
            self._fit()
