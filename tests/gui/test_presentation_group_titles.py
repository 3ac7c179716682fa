"""The Training tab presented (F5): its group boxes' titles ("Training curves", "How attention emerged …") at the
figure's title size, not the application font's (issue 36: ~10–12 px under 20 px figure titles); Esc gives the
boxes their own size back."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QFontInfo  # noqa: E402
from PySide6.QtWidgets import QGroupBox  # noqa: E402


def _titles_px(win) -> dict[str, int]:
    return {b.title(): QFontInfo(b.font()).pixelSize() for b in win.training_page.findChildren(QGroupBox)
            if b.isVisible()}


def test_presented_training_tab_titles_its_groups_at_the_figure_title_size(make_window, qtbot):
    from attnviz.gui.panels.presentation import enter_presentation, leave_presentation
    from attnviz.gui.panels.presentation_titles import TITLE_FACTOR

    win = make_window(model="tiny-encoder", text="the cat sat on the mat")
    qtbot.waitUntil(lambda: win.trace is not None, timeout=90_000)
    tabs = win.tabs
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if "Train" in tabs.tabText(i)))
    qtbot.waitUntil(lambda: getattr(win, "training", None) is not None and bool(_titles_px(win)), timeout=60_000)
    before = _titles_px(win)
    enter_presentation(win)
    try:
        qtbot.waitUntil(lambda: win.presentation_mode.active, timeout=10_000)
        style = win.pages.view_style
        want = QFontInfo(style.font(TITLE_FACTOR, bold=True)).pixelSize()
        app_px = QFontInfo(win.font()).pixelSize()
        presented = _titles_px(win)
        assert "Training curves" in presented, presented
        # control: the application font a box had before is well under the figure's titles
        assert app_px < 0.85 * want, (app_px, want)
        assert all(px >= want - 1 for px in presented.values()), (presented, want)
        # the boxes' controls keep the application font (a sheet's font does not pass to children)
        combo = win.training.task_box
        assert QFontInfo(combo.font()).pixelSize() <= app_px + 1
    finally:
        leave_presentation(win)
    assert _titles_px(win) == before
