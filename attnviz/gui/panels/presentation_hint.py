"""A short line over the presented figure: how to leave presentation mode, and that Page Down has reached
the last step. Presentation hides the menus and the status bar, so without it a lecturer who pressed F5
has nothing on screen that says how to get back, and a clicker that stops at the last step looks broken."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["PresentationHint", "LEAVE_TEXT", "leave_text", "step_position", "occupied_rects", "can_step"]

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
        self._place_timer = QTimer(self)  # once more after the figure has its full-screen layout
        self._place_timer.setSingleShot(True)
        self._place_timer.timeout.connect(self.place)
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
        self._place_timer.start(100)

    def place(self) -> None:
        """In the corner of the window where the hint covers the least of the figure (its titles, axes,
        maps, tab rows and controls): a fixed top-right corner covered the walkthrough's tab row for its
        first seconds, and centred at the bottom the x-axis labels and the caption."""
        win = self.parentWidget()
        m = 12
        w, h = self.width(), self.height()
        corners = [QRect(win.width() - w - m, m, w, h), QRect(win.width() - w - m, win.height() - h - m, w, h),
                   QRect(m, m, w, h), QRect(m, win.height() - h - m, w, h)]
        taken = occupied_rects(win, exclude=self)
        cover = {id(r): sum(_area(r.intersected(t)) for t in taken) for r in corners}
        best = min(corners, key=lambda r: cover[id(r)])
        # (every corner covered: the least covered one. The status line was tried: shown for the hint's
        # seconds, it shrank the presented figure under the legible floor while it was up)
        self.move(max(0, best.x()), max(0, best.y()))

def _area(r: QRect) -> int:
    return max(0, r.width()) * max(0, r.height()) if r.isValid() else 0


def occupied_rects(win: QWidget, exclude: QWidget | None = None) -> list[QRect]:
    """Rectangles of ``win`` (its coordinates) that hold something to read or click: every visible leaf
    widget (tab rows, buttons, token chips, labels with text, matrix grids — a container's empty margins are
    free), and on a figure canvas its titles, axes, images and colour bars (the canvas itself is free)."""
    import pyqtgraph as pg

    out = []
    canvases = [c for c in win.findChildren(pg.GraphicsView) if c.isVisible() and c.window() is win]
    for child in win.findChildren(QWidget):
        if child is exclude or not child.isVisible() or child.window() is not win or child.isWindow():
            continue
        if isinstance(child, pg.GraphicsView):
            items = (pg.LabelItem, pg.AxisItem, pg.ImageItem, pg.TextItem)
            for item in child.scene().items():
                if item.isVisible() and (isinstance(item, items) or type(item).__name__ == "ColourBarItem"):
                    # a title's item spans its layout cell: its text is what covers
                    shape = item.item if isinstance(item, pg.LabelItem) else item
                    box = child.mapFromScene(shape.sceneBoundingRect()).boundingRect()
                    out.append(QRect(child.mapTo(win, box.topLeft()), box.size()))
            continue
        if any(c.isAncestorOf(child) for c in canvases):
            continue  # a canvas's viewport: its items are counted above
        if any(isinstance(k, QWidget) and k.isVisible() for k in child.children()):
            continue  # a container: its leaves are counted
        if isinstance(child, QLabel) and not (child.text().strip() or child.pixmap() and not child.pixmap().isNull()):
            continue
        out.append(QRect(child.mapTo(win, QPoint(0, 0)), child.size()))
    return out


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


def can_step(fig) -> bool:
    """Whether Page Down / Page Up do something on ``fig`` (what :meth:`PresentationMode.step` drives)."""
    return step_position(fig) is not None and (hasattr(fig, "step_by") or hasattr(fig, "set_step"))
