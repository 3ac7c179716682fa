"""The window at 1280×720 (a common projector, issue 36 finding 13): the input dock one line tall, the head
map at least half the window's width and most of its height; at 1920×1080 the full input panel (control)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication, QTabBar  # noqa: E402

pytestmark = pytest.mark.slow


def _window(make_window, qtbot, w, h):
    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    win.showNormal()
    win.resize(w, h)
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    for _ in range(10):
        QApplication.processEvents()
    return win


def test_1280x720_gives_the_head_map_the_room(make_window, qtbot):
    win = _window(make_window, qtbot, 1280, 720)
    line = QFontMetrics(win.input_panel.edit.font()).lineSpacing()
    dock = win.docks["InputDock"]
    assert win.input_panel.edit.height() < 2 * line + 16  # one line of text
    assert dock.height() < 2 * line + 60, f"input dock {dock.height()} px"
    head_map = win.views_area.docks["HeadMapView"] if "HeadMapView" in win.views_area.docks else \
        next(d for n, d in win.views_area.docks.items() if "head" in n.lower() and "map" in n.lower())
    assert head_map.width() >= 0.5 * win.width(), f"head map {head_map.width()} of {win.width()} px"
    assert head_map.height() >= 0.6 * win.height(), f"head map {head_map.height()} of {win.height()} px"
    assert not _scrolling_tab_rows(win), _scrolling_tab_rows(win)
    # every view still one click away: a tab, or the Views menu (the folded ones)
    tabs = sum(b.count() for b in _tab_bars(win))
    assert tabs + len(win.views_area.folded) + len(win.views_area.not_offered) >= len(win.views_area.docks)
    assert win.views_area.folded and win.tabs.cornerWidget().isVisible()


def test_a_folded_view_opens_from_the_menu_and_all_return_at_full_size(make_window, qtbot):
    from attnviz.gui.panels.compact_layout import CompactArrangement

    win = _window(make_window, qtbot, 1280, 720)
    area = win.views_area
    qtbot.waitUntil(lambda: bool(area.folded), timeout=30_000)
    name = area.folded[-1]
    CompactArrangement.of(win).show_view(name)
    qtbot.waitUntil(lambda: area.docks[name].isVisible(), timeout=30_000)
    assert name not in area.folded and area.folded  # another folded in its place
    assert not _scrolling_tab_rows(win), _scrolling_tab_rows(win)
    folded = list(area.folded)
    blob = area.saveState()  # the layout file: folding is for this size, not the user's choice of views
    assert area.folded == folded and all(area.docks[n].isHidden() for n in folded)
    area.restoreState(blob)
    assert not area.folded and all(not area.docks[n].isHidden() for n in folded)
    win.resize(1920, 1080)
    qtbot.waitUntil(lambda: not area.folded, timeout=30_000)
    assert all(not d.isHidden() for n, d in area.docks.items() if n not in area.not_offered)  # (patch filters: a text model)
    assert not win.input_panel.compact and not win.tabs.cornerWidget().isVisible()


def _tab_bars(win):
    for _ in range(5):
        QApplication.processEvents()
    return [b for b in win.views_area.findChildren(QTabBar) if b.isVisible() and b.count() > 1]


def _scrolling_tab_rows(win) -> list[str]:
    out = []
    for bar in _tab_bars(win):
        right = max(bar.tabRect(i).right() for i in range(bar.count()))
        if right > bar.width():
            out.append(f"{[bar.tabText(i) for i in range(bar.count())]}: {right} > {bar.width()} px")
    return out


def test_1920x1080_keeps_the_full_input_panel(make_window, qtbot):
    win = _window(make_window, qtbot, 1920, 1080)
    assert win.input_panel.strip.isVisible() and win.input_panel.edit.height() > 2 * \
        QFontMetrics(win.input_panel.edit.font()).lineSpacing()


def test_no_tab_row_scrolls_as_each_view_is_brought_forward(make_window, qtbot, monkeypatch):
    """The walk a user makes from the Views menu after model switches: each view in front in turn. A view
    with a wide minimum (the Data set's) widens its group; the other row was measured at its docks' widest
    width, and a dock behind a tab keeps its old width, so the row kept six tabs in ~590 px and scrolled
    (masked-lm after induction, as h36walk2's walk saw it)."""
    # found in a helper: a failing assert here holds no window in its traceback (which would leak it)
    problems = _walk_after_switches(make_window, qtbot, monkeypatch)
    assert not problems, "\n".join(problems)


def _walk_after_switches(make_window, qtbot, monkeypatch) -> list[str]:
    from test_layout_audit_switch import BUNDLED, _switch

    win = _window(make_window, qtbot, 1280, 720)
    problems = _walk(win, qtbot, "tiny-encoder")
    models = [m for m in ("induction", "masked-lm") if (BUNDLED / m / "config.json").exists()]
    if models:  # the bundled models where it was seen (built by make assets)
        monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    for model in models:
        _switch(win, qtbot, str(BUNDLED / model))
        problems += _walk(win, qtbot, model)
    return problems


def _walk(win, qtbot, model: str) -> list[str]:
    """Each view brought forward from the Views menu in turn; the tab rows that scroll after each."""
    from attnviz.gui.panels.compact_layout import CompactArrangement

    arrangement, area, problems = CompactArrangement.of(win), win.views_area, []
    for name in list(area.docks):
        arrangement.show_view(name)
        qtbot.waitUntil(lambda: area.on_screen(name), timeout=30_000)
        for _ in range(20):
            QApplication.processEvents()
        problems += [f"{model}, after {name}: {p}" for p in _scrolling_tab_rows(win)]
    return problems
