"""The Training tab's first show is painted once its layouts have settled at its real size (issue 18: each
layout pass repainted both plot views, a freeze of 80-140 ms), and it is painted normally after that."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QGraphicsView


class _Paints(QObject):
    """Counts the Paint events of some widgets."""

    def __init__(self, widgets):
        super().__init__()
        self.widgets, self.count = set(widgets), 0

    def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and obj in self.widgets:
            self.count += 1
        return False


def test_training_tab_first_show_is_painted_once_settled(make_window, qtbot, qapp):
    from attnviz.gui.window.pages import FIRST_SHOW_SETTLE_TURNS

    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=60000)
    page = win.training_page
    assert win.tabs.currentWidget() is not page
    assert not page.updatesEnabled()  # hidden and never shown: held until its first show settles
    paints = _Paints(v.viewport() for v in win.training.findChildren(QGraphicsView))
    assert paints.widgets  # the curves and the replay's head map
    qapp.installEventFilter(paints)
    try:
        win.tabs.setCurrentWidget(page)
        assert not page.updatesEnabled()
        for _ in range(FIRST_SHOW_SETTLE_TURNS - 1):  # its layouts settle, nothing is painted
            qapp.processEvents()
        assert paints.count == 0 and not page.updatesEnabled()
        qtbot.waitUntil(page.updatesEnabled, timeout=5000)
        qtbot.waitUntil(lambda: paints.count >= len(paints.widgets), timeout=5000)  # then painted
    finally:
        qapp.removeEventFilter(paints)
    # shown again later: painted at once, never held
    win.tabs.setCurrentIndex(0)
    qtbot.wait(20)
    win.tabs.setCurrentWidget(page)
    assert page.updatesEnabled()
