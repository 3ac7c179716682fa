"""The F5 hint covers nothing it can avoid (issue 36 item 5: fixed top right, it covered the right end of a tab
row for ~4 s), and offers Page Down only on a figure that Page Down steps."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRect  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QTabBar, QWidget  # noqa: E402


def _window_with(qtbot, parts):
    win = QWidget()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    for make, geo in parts:
        w = make(win)
        w.setGeometry(*geo)
    win.show()
    QApplication.processEvents()
    return win


def _tabs(win):
    bar = QTabBar(win)
    for name in ("Steps", "Matrix form", "Many heads", "What if", "Z = PV"):
        bar.addTab(name)
    bar.setExpanding(True)
    return bar


def test_the_hint_takes_the_free_corner(qtbot):
    from attnviz.gui.panels.presentation_hint import PresentationHint, occupied_rects

    # a tab row across the top and a caption bottom left: the bottom right corner is free
    win = _window_with(qtbot, [(_tabs, (0, 0, 1280, 40)), (lambda w: QLabel("caption", w), (0, 660, 400, 60))])
    hint = PresentationHint(win)
    hint.flash("Presenting · Esc or F5: back to the app")
    taken = occupied_rects(win, exclude=hint)
    assert len(taken) == 2  # the control: the tab row and the caption are seen
    assert not any(hint.geometry().intersects(t) for t in taken), (hint.geometry(), taken)
    assert hint.geometry().bottom() > 600 and hint.geometry().right() > 1200  # the free corner


def test_the_hint_stays_top_right_when_that_is_free(qtbot):
    from attnviz.gui.panels.presentation_hint import PresentationHint

    win = _window_with(qtbot, [(lambda w: QLabel("x axis labels", w), (0, 640, 1280, 80))])
    hint = PresentationHint(win)
    hint.flash("Presenting · Esc or F5: back to the app")
    assert hint.geometry().top() < 100 and not hint.geometry().intersects(QRect(0, 640, 1280, 80))


def test_page_down_is_offered_only_where_it_steps():
    from attnviz.gui.panels.presentation_hint import can_step, leave_text

    class Slider:
        def value(self):
            return 0

        def maximum(self):
            return 3

    class Replay:  # a slider but no step_by / set_step: Page Down would do nothing
        slider = Slider()

    class Steps(Replay):
        def step_by(self, delta):
            pass

    assert not can_step(Replay()) and can_step(Steps())
    assert "Page Down" not in leave_text(can_step(Replay())) and "Page Down" in leave_text(can_step(Steps()))


def _drawn_in(win, rect) -> bool:
    """Whether anything is drawn in ``rect`` of ``win`` (its pixels there are not all one colour)."""
    from attnviz.gui.panels.presentation_hint import _pixels
    from PySide6.QtGui import QImage

    image = win.grab(rect).toImage().convertToFormat(QImage.Format.Format_RGB32)
    p = _pixels(image)
    return bool((p != p[0, 0]).any())


def test_the_hint_covers_nothing_of_the_walkthroughs_query_row(qtbot):
    """The walkthrough presented at 1280×720 (issue 36: the hint covered the right end of the query row,
    "because it was tired", for its ~4 s): the hint goes where nothing is drawn. Control: the corner the
    widget boxes alone chose (top right: the notice line fills the bottom) covers drawn pixels of the query
    row's chips, and the check sees them."""
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.panels.presentation_hint import PresentationHint, leave_text
    from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import Selection

    if "coref" not in bundled_models():
        pytest.skip("the bundled models are not built (make assets)")
    trace = run_trace(load_model("coref", device="cpu"), text="the animal did not cross the street because it was tired")
    win = WalkthroughWidget(selection=Selection(), style=compose_style("light", True, "viridis", lines=720))
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    win.set_trace(trace)
    # the app's notice line across the bottom of the window, as on screen when the walkthrough opens
    notice = QLabel("The walkthrough opens on layer 0 · head 2, where the row of 'it' mixes several values", win)
    notice.setStyleSheet("background: #dde8f4")
    notice.setGeometry(0, 694, 1280, 26)
    notice.show()
    for _ in range(5):
        QApplication.processEvents()
    strip = win.tokens
    chips = [QRect(strip.mapTo(win, b.topLeft().toPoint()), b.size().toSize()) for b in strip._boxes]
    hint = PresentationHint(win)
    hint.flash(leave_text(True))
    QApplication.processEvents()
    spot = hint.geometry()
    hint.hide()
    assert not _drawn_in(win, spot), f"the hint at {spot.getRect()} covers something drawn"
    assert not any(spot.intersects(c) for c in chips)
    old = hint.least_covered_corner()
    covered = [c for c in chips if old.intersects(c)]
    assert covered and _drawn_in(win, old), (old.getRect(), "the control: the corner rule covered chips")


def test_free_spot_finds_only_one_coloured_room():
    """free_spot on synthetic pixels: a spot free of a drawn mark is found nearest the top right; none in a
    window drawn all over (the fallback then takes the least covered corner)."""
    import numpy as np

    from attnviz.gui.panels.presentation_hint import free_spot

    p = np.zeros((200, 400), np.uint32)
    p[0:60, 300:400] = 7  # a drawn block top right
    x, y = free_spot(p, 1, 100, 30, 12)
    assert not (p[y - 4:y + 34, x - 4:x + 104] != 0).any() and x + 100 <= 388 and y >= 12
    assert y > 60 or x + 104 <= 300  # beside or under the block, not on it
    noise = np.arange(200 * 400, dtype=np.uint32).reshape(200, 400)
    assert free_spot(noise, 1, 100, 30, 12) is None


class _Ink(QWidget):
    """A widget drawn all over (a stripe every 5 px): no spot in it is free."""

    def paintEvent(self, event):
        from PySide6.QtGui import QPainter

        p = QPainter(self)
        for y in range(0, self.height(), 5):
            p.drawLine(0, y, self.width(), y)


def test_where_only_a_two_line_hint_fits_it_takes_two_lines_and_covers_nothing(qtbot):
    """The matrix form presented at 1280×720 fills the window: no room for the ~580 px one-line hint, which then
    took the least covered corner over the colour bars; a 450 × 90 gap top right holds the same words on two
    lines. Control: with a wide gap the hint keeps one line."""
    from attnviz.gui.panels.presentation_hint import LEAVE_TEXT, PresentationHint, two_lines

    def window(gap_w):
        return _window_with(qtbot, [(_Ink, (0, 0, 1280 - gap_w, 720)), (_Ink, (1280 - gap_w, 90, gap_w, 630))])

    win = window(450)
    hint = PresentationHint(win)
    hint.flash(LEAVE_TEXT)
    QApplication.processEvents()
    assert hint.text() == two_lines(LEAVE_TEXT) and hint.text().count("\n") == 1
    spot = hint.geometry()
    assert spot.left() >= 1280 - 450 and spot.bottom() < 90, spot.getRect()
    hint.hide()
    assert not _drawn_in(win, spot)
    wide = window(900)
    hint = PresentationHint(wide)
    hint.flash(LEAVE_TEXT)
    QApplication.processEvents()
    assert hint.text() == LEAVE_TEXT and hint.geometry().bottom() < 90


def test_two_lines_splits_the_hint_evenly():
    from attnviz.gui.panels.presentation_hint import LEAVE_TEXT, leave_text, two_lines

    assert two_lines(LEAVE_TEXT) == ("Presenting · Esc or F5: back to the app\n"
                                     "Page Down / Page Up: next / previous step")
    assert two_lines(leave_text(False)) == "Presenting\nEsc or F5: back to the app"
    assert two_lines("one part") == "one part"


def test_the_hint_moves_when_the_window_resizes_under_it(qtbot):
    """The window is resized after the hint is placed (F5's full screen lands later under a window manager): a
    row of labels moves under the hint's first spot, and the hint is placed again where nothing is drawn.
    Control: the moved row is under the first spot (the check sees it)."""
    from PySide6.QtWidgets import QVBoxLayout

    from attnviz.gui.panels.presentation_hint import PresentationHint

    win = QWidget()
    qtbot.addWidget(win)
    lay = QVBoxLayout(win)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addStretch(1)
    row = _Ink(win)  # a row drawn across the window, as a figure's axis labels: a quarter of the way down
    row.setFixedHeight(60)
    lay.addWidget(row)
    lay.addStretch(3)
    win.resize(1280, 400)
    win.show()
    QApplication.processEvents()
    hint = PresentationHint(win)
    hint.flash("Presenting · Esc or F5: back to the app")
    # its own second placement done (its timer run out): the resize comes later
    qtbot.waitUntil(lambda: not hint._place_timer.isActive(), timeout=5000)
    QApplication.processEvents()
    first = hint.geometry()
    assert hint.isVisible()
    hint.hide()
    assert not _drawn_in(win, first)
    hint.show()
    win.resize(1280, 160)  # the row moves up across the first spot (the bottom is free)
    QApplication.processEvents()
    hint.hide()
    assert _drawn_in(win, first), "control: the moved row is not under the first spot"
    hint.show()
    qtbot.waitUntil(lambda: hint.geometry() != first, timeout=2000)
    spot = hint.geometry()
    hint.hide()
    assert not _drawn_in(win, spot), spot.getRect()
