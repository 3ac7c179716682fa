"""An opaque cover over a widget while another model loads: its figures are the previous model's, so none of
them may show, yet they stay intact under it (a load that fails takes the cover away and nothing is lost or
computed again: re-running a long input on a real-size model would take minutes)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QTabWidget, QWidget

__all__ = ["LoadingCover"]


class LoadingCover(QLabel):
    """A label filling ``target`` (for a QTabWidget, its pages' area: the tab row stays usable), hidden until
    :meth:`cover` is called."""

    def __init__(self, target: QWidget):
        super().__init__(target)
        self.target = target
        self.setObjectName("loadingCover")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setAutoFillBackground(True)  # opaque: the window colour, nothing of what is underneath
        self.setBackgroundRole(self.backgroundRole().Window)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        self.setFont(font)
        self.hide()
        target.installEventFilter(self)

    def _area(self):
        if isinstance(self.target, QTabWidget):
            pages = self.target.findChild(QStackedWidget)
            if pages is not None:
                return pages.geometry()
        return self.target.rect()

    def cover(self, text: str) -> None:
        self.setText(text)
        self.setGeometry(self._area())
        self.show()
        self.raise_()

    def uncover(self) -> None:
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.target and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) \
                and self.isVisible():
            self.setGeometry(self._area())
        return False
