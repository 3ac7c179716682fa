"""The F5 hint covers nothing it can avoid (issue 36 item 5: fixed top right, it covered the right end of a tab
row for ~4 s), and offers Page Down only on a figure that Page Down steps."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

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
