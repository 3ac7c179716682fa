"""The compact window's Views menu button draws one arrow with room for it: as a tool button labelled
"Views ▾" the style's own arrow was drawn against the "▾" (seen at 1280×720)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from menu_arrow import clear_of_arrow  # noqa: E402


def test_the_views_button_has_one_arrow_clear_of_its_text(make_window, qtbot):
    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: win.tabs.cornerWidget() is not None and win.tabs.cornerWidget().isVisible(),
                    timeout=30000)
    button = win.tabs.cornerWidget()
    assert button.menu() is not None
    assert "▾" not in button.text() and "▼" not in button.text()  # the style draws the one arrow
    assert clear_of_arrow(button) >= 0
