"""Layout audit, presenting: F5 on each attention view of a 1920×1080 window (split from test_layout_audit.py,
whose helpers it shares)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from layout_audit import MIN_PX, PRESENT_PX, presented_label_problems, scene_problems  # noqa: E402
from test_layout_audit import DATA_SET_VIEWS  # noqa: E402

pytestmark = pytest.mark.slow


def test_every_attention_view_presented_f5_at_1920x1080(make_window, qtbot):
    """F5 on each attention view of a 1920×1080 window, in the style a 1080-line screen gets: titles
    name what is shown, labels are whole and at least ``PRESENT_PX`` (a lecture hall's back row)."""
    from attnviz.gui.panels.appearance import compose_style
    from attnviz.gui.panels.presentation import enter_presentation, leave_presentation

    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    style = compose_style("light", True, "viridis", lines=1080)  # the test screen is smaller than 1080 lines
    problems = []
    try:
        for name in list(win.views_area.docks):
            view = win.views_area.build(name)
            win.views_area.docks[name].raise_()
            enter_presentation(win, view)
            win.setGeometry(0, 0, 1920, 1080)
            win.views_area.set_style(style)
            for _ in range(8):
                QApplication.processEvents()
            view.ensure_current()
            QApplication.processEvents()
            if view.trace is None or name in DATA_SET_VIEWS:
                continue  # a view for other models says so; the data-set views need a task (audited below)
            what = f"F5 {name} 1920×1080"
            problems += scene_problems(view.canvas.scene(), 1.0, MIN_PX, what)
            problems += presented_label_problems(view, PRESENT_PX, what)
    finally:
        leave_presentation(win)
    assert not problems, "\n".join(problems)
