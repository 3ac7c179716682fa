"""F5 presents the view the lecturer last clicked (a40: after a click in the All heads grid beside the Head map, F5
presented the Head map: a click does not always leave the focus in the clicked view, and the window fell back to
the first view on screen)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QVBoxLayout, QWidget


def _click(widget) -> None:
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(widget.width() // 2, widget.height() // 2))


def test_the_last_pressed_view_is_known_whatever_holds_the_focus(qtbot):
    from attnviz.gui.panels.last_pressed import LastPressed

    top = QWidget()
    qtbot.addWidget(top)
    lay = QVBoxLayout(top)
    views = [QWidget(), QWidget()]
    inner = []
    for v in views:
        lay.addWidget(v)
        child = QWidget(v)  # a canvas that takes no focus (as the grid's did)
        child.resize(80, 40)
        inner.append(child)
    top.resize(200, 200)
    top.show()
    qtbot.waitExposed(top)
    pressed = LastPressed(lambda: views, top)
    assert pressed.view() is None
    _click(inner[1])
    assert pressed.view() is views[1]
    _click(inner[0])
    assert pressed.view() is views[0]
    _click(top)  # control: a press outside every view changes nothing
    assert pressed.view() is views[0]


def test_f5_presents_the_view_last_clicked(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90000)
    area = win.views_area
    shown = area.visible_views()
    assert shown
    first = shown[0]
    area.pressed._last = None
    _click(first.canvas.viewport())
    assert area.pressed.view() is first and win.current_figure() is first
