"""A short line over the presented figure: how to leave presentation mode, and that Page Down has reached
the last step. Presentation hides the menus and the status bar, so without it a lecturer who pressed F5
has nothing on screen that says how to get back, and a clicker that stops at the last step looks broken."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["PresentationHint", "LEAVE_TEXT", "leave_text", "step_position", "occupied_rects", "can_step", "free_spot",
           "two_lines", "step_keys", "step_unit", "end_text", "SHOWN_MS", "HINT_COLOURS"]

LEAVE_TEXT = "Presenting · Esc or F5: back to the app · Page Down / Page Up: next / previous step"


def leave_text(fig) -> str:
    """The hint on entering: how to leave, and only the clicker keys that do something on ``fig`` (a lesson's
    first scene has no previous one, a head map no steps: issue 36 found "Page Down" offered where it did
    nothing). ``fig`` may be a plain ``bool`` (has steps: both keys, "step")."""
    leave = LEAVE_TEXT.split(" · Page Down")[0]
    if isinstance(fig, bool):
        return LEAVE_TEXT if fig else leave
    keys = [k for k in (step_keys(fig), _call(fig, "keys_hint")) if k]
    return " · ".join([leave] + keys)


def _call(fig, name: str) -> str:
    """``fig.name()`` when the figure offers it (a paged grid's keys), else ""."""
    method = getattr(fig, name, None)
    return method() if callable(method) else ""


def step_unit(fig) -> str:
    """What Page Down moves to on ``fig``: a lesson's "scene", the matrix form's "part", else "step"."""
    if hasattr(fig, "lesson") and hasattr(fig, "index"):
        return "scene"
    return "part" if getattr(fig, "section_box", None) is not None else "step"


def step_keys(fig) -> str:
    """"Page Down / Page Up: next / previous scene", or the one key that moves from an end, or "" where neither
    does anything (no steps, or a single one)."""
    if fig is None or not can_step(fig):
        return ""
    i, n = step_position(fig)
    unit = step_unit(fig)
    on, back = i < n - 1, i > 0
    if on and back:
        return f"Page Down / Page Up: next / previous {unit}"
    if on:
        return f"Page Down: next {unit}"
    return f"Page Up: previous {unit}" if back else ""


def end_text(fig, delta: int) -> str:
    """The hint when Page Down (``delta`` > 0) or Page Up found no further step: where the clicker is and the
    key that does move (a lesson says "scene", the matrix form "part")."""
    i, n = step_position(fig)
    unit = step_unit(fig)
    where = "the last" if delta > 0 else "the first"
    back = "Page Up goes back" if delta > 0 else "Page Down goes on"
    return f"This is {where} {unit} ({i + 1} of {n}) · {back} · Esc or F5: back to the app"


SHOWN_MS = 4000
HINT_COLOURS = "background: rgba(30, 30, 30, 215); color: white;"  # the hint's look, over a figure or in a strip


class PresentationHint(QLabel):
    """A rounded label centred near the bottom of ``win``; :meth:`flash` shows it for a few seconds."""

    def __init__(self, win: QWidget):
        super().__init__(win)
        self.setObjectName("presentation_hint")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # clicks reach the figure
        self.setStyleSheet(f"QLabel#presentation_hint {{ {HINT_COLOURS} border-radius: 8px; padding: 10px 22px; }}")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self._place_timer = QTimer(self)  # once more after the figure has its full-screen layout
        self._place_timer.setSingleShot(True)
        self._place_timer.timeout.connect(self.place)
        self._text = ""
        win.installEventFilter(self)  # the window resized under the hint (full screen lands late): placed again
        self.hide()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and obj is self.parentWidget() and self.isVisible():
            self._place_timer.start(100)  # once its figure is laid out at the new size
        return False

    def flash(self, text: str, ms: int = SHOWN_MS) -> None:
        if not shiboken6.isValid(self):
            return
        self.setText(text)
        self._text = text
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
        """Where the hint covers nothing the window draws: the free spot (one colour under it, found in an
        image of the window without the hint) nearest a corner. Only where there is none, the corner that
        covers the least of the figure's titles, axes, maps, tab rows and controls. (A fixed top-right corner
        covered the walkthrough's tab row; the least-covered corner of widget boxes still covered its query
        row for ~4 s, the token strip's box spanning the width while its chips end earlier.)"""
        win = self.parentWidget()
        m = 12
        pixels = self._window_pixels(win)
        # one line, else the same words on two lines: a figure that fills the window (the matrix form at
        # 1280×720) had no free spot for the ~580 px line, but one for a two-line box, above its maps
        for text in dict.fromkeys([self._text, two_lines(self._text)]):
            self.setText(text)
            self.adjustSize()
            free = free_spot(pixels[0], pixels[1], self.width(), self.height(), m)
            if free is not None:
                self.move(*free)
                return
        self.setText(self._text)
        self.adjustSize()
        best = self.least_covered_corner()
        self.move(max(0, best.x()), max(0, best.y()))

    def least_covered_corner(self) -> QRect:
        """The corner of the window whose rectangle for the hint covers the least of the widgets' and
        figure items' boxes (:func:`occupied_rects`)."""
        win = self.parentWidget()
        m = 12
        w, h = self.width(), self.height()
        corners = [QRect(win.width() - w - m, m, w, h), QRect(win.width() - w - m, win.height() - h - m, w, h),
                   QRect(m, m, w, h), QRect(m, win.height() - h - m, w, h)]
        taken = occupied_rects(win, exclude=self)
        cover = {id(r): sum(_area(r.intersected(t)) for t in taken) for r in corners}
        # (every corner covered: the least covered one. The status line was tried: shown for the hint's
        # seconds, it shrank the presented figure under the legible floor while it was up)
        return min(corners, key=lambda r: cover[id(r)])

    def _window_pixels(self, win: QWidget):
        """(pixels, device pixels per logical one) of an image of ``win`` without the hint, for :func:`free_spot`."""
        shown = self.isVisible()
        self.hide()  # the image is of what the hint would cover
        try:
            image = win.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
        finally:
            if shown:
                self.show()
        return _pixels(image), int(round(image.width() / max(win.width(), 1))) or 1


def two_lines(text: str) -> str:
    """The hint's parts (" · ") on two lines, split where the lines come out most even."""
    parts = text.split(" · ")
    if len(parts) < 2:
        return text
    cut = min(range(1, len(parts)), key=lambda i: abs(len(" · ".join(parts[:i])) - len(" · ".join(parts[i:]))))
    return " · ".join(parts[:cut]) + "\n" + " · ".join(parts[cut:])


def _pixels(image: QImage):
    """(rows, columns) uint32 colours of an RGB32 image (a copy: the image's buffer is not kept)."""
    import numpy as np

    row = image.bytesPerLine() // 4
    buf = np.frombuffer(image.constBits(), np.uint32, count=image.height() * row)
    return buf.reshape(image.height(), row)[:, :image.width()].copy()  # (H, W)


def free_spot(pixels, ratio: int, w: int, h: int, margin: int, clear: int = 4) -> tuple[int, int] | None:
    """(x, y) in logical pixels of a ``w`` × ``h`` spot at least ``margin`` inside the window and ``clear``
    from anything drawn, where ``pixels`` (device pixels, ``ratio`` per logical one) are all one colour; of
    all such spots the one nearest a window corner (top right, bottom right, top left, bottom left on a tie)."""
    import numpy as np

    p = pixels[::ratio, ::ratio]  # (H, W) logical pixels
    H, W = p.shape
    bw, bh = w + 2 * clear, h + 2 * clear  # the spot with its clearance
    if W < w + 2 * margin or H < h + 2 * margin:
        return None
    # a pixel unlike its right or lower neighbour is an edge of something drawn; a box with no edge in it
    # is one colour (background) throughout
    edge = np.zeros((H, W), bool)
    edge[:, :-1] |= p[:, :-1] != p[:, 1:]
    edge[:-1, :] |= p[:-1, :] != p[1:, :]
    edge[:, -1] = edge[-1, :] = False
    sat = np.zeros((H + 1, W + 1), np.int64)  # summed-area table of the edges
    sat[1:, 1:] = edge.cumsum(0).cumsum(1)
    count = sat[bh:, bw:] - sat[:-bh, bw:] - sat[bh:, :-bw] + sat[:-bh, :-bw]  # (H - bh + 1, W - bw + 1)
    ys, xs = np.nonzero(count == 0)  # top-left corners of the free boxes
    xs, ys = xs + clear, ys + clear  # of the spots in them
    inside = (xs >= margin) & (ys >= margin) & (xs + w <= W - margin) & (ys + h <= H - margin)
    xs, ys = xs[inside], ys[inside]
    if not len(xs):
        return None
    corners = [(W - margin - w, margin), (W - margin - w, H - margin - h), (margin, margin), (margin, H - margin - h)]
    dist = np.stack([np.hypot(xs - cx, ys - cy) for cx, cy in corners])  # (4, n)
    best = np.unravel_index(np.argmin(dist), dist.shape)[1]
    return int(xs[best]), int(ys[best])


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
