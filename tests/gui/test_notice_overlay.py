"""A notice floats over the window: showing, replacing or closing it moves and resizes no view (issue 18).

In a layout row of its own the strip changed the height of the views area whenever it came or went,
and every visible view re-laid out (a freeze, and the figures jumped).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint


def _geometries(win) -> list:
    """Where the tabs, the views area and every visible view are, in window coordinates."""
    out = [("tabs", win.tabs.geometry()), ("views area", win.views_area.geometry())]
    for view in win.views_area.visible_views():
        out.append((type(view).__name__, view.mapTo(win, QPoint(0, 0)), view.size()))
    return out


def test_showing_and_closing_a_notice_moves_no_view(make_window, qtbot):
    win = make_window()
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed and win.warm, timeout=60000)
    # the docks settle in a few turns after start-up (hidden views built in idle time): wait until
    # nothing moves any more, so what is compared is the notice's doing alone
    before, settled = None, 0
    while settled < 3:
        qtbot.wait(100)
        now = _geometries(win)
        settled = settled + 1 if now == before else 0
        before = now
    assert len(before) > 2  # some views are on screen to compare
    for level in ("info", "warning", "error"):
        win.notify(f"a {level} notice that is long enough to say something " * (3 if level == "error" else 1), level)
        qtbot.wait(50)
        assert win.notice.isVisible()
        assert _geometries(win) == before
    win.notice.dismiss()
    qtbot.wait(50)
    assert not win.notice.isVisible() and _geometries(win) == before


def test_the_notice_is_on_top_beside_the_tabs_and_wraps(make_window, qtbot):
    win = make_window(start=False)
    win.resize(1200, 800)
    qtbot.wait(50)
    win.notify("short", "warning")
    qtbot.wait(50)
    bar, tabbar = win.notice, win.tabs.tabBar()
    host = bar.parentWidget()
    rect = bar.geometry()
    # never over a tab: the user switches pages with the notice up
    for i in range(tabbar.count()):
        tab = tabbar.tabRect(i).translated(tabbar.mapTo(host, QPoint(0, 0)))
        assert not rect.intersects(tab)
    assert host.rect().contains(rect)
    # raised: what is under its middle is the strip (or its label), not the page beneath
    under = host.childAt(rect.center())
    assert under is bar or bar.isAncestorOf(under)
    one_line = rect.height()
    win.notify("a much longer warning that has to wrap onto more lines " * 8, "warning")
    qtbot.wait(50)
    assert bar.geometry().height() > one_line and host.rect().contains(bar.geometry())
    # a narrow window: the strip goes under the tab bar, still clear of the tabs
    win.resize(520, 700)
    qtbot.wait(100)
    rect = bar.geometry()
    assert all(not rect.intersects(tabbar.tabRect(i).translated(tabbar.mapTo(host, QPoint(0, 0))))
               for i in range(tabbar.count()))
    assert rect.width() <= host.width()


def test_a_wrapping_notice_covers_no_row_of_tabs(make_window, qtbot):
    """Beside the tabs a notice that wrapped grew down over the views' own tab row (seen at 1280×720); a text
    that does not fit there on one line goes along the bottom edge instead. Control: a short one stays beside."""
    from PySide6.QtWidgets import QTabBar

    win = make_window()
    qtbot.waitUntil(lambda: win.trace is not None and win.views_installed, timeout=60000)
    win.resize(1280, 660)
    qtbot.wait(100)
    bar, main_tabs = win.notice, win.tabs.tabBar()
    host = bar.parentWidget()

    def tab_rows():  # every visible row of tabs in the window: the pages' and the views' dock tabs
        return [(t, t.rect().translated(t.mapTo(host, QPoint(0, 0)))) for t in win.findChildren(QTabBar)
                if t.isVisible() and t.count()]

    assert len(tab_rows()) >= 2  # the pages' tabs and at least one row of view tabs
    win.notify("this model's tokenizer splits words into pieces the examples do not use, so some labels are "
               "sub-words; the maps are still the model's own attention", "warning")
    qtbot.wait(50)
    rect = bar.geometry()
    assert bar.isVisible() and host.rect().contains(rect)
    assert [t for t, r in tab_rows() if r.intersects(rect)] == []
    win.notify("short", "warning")
    qtbot.wait(50)
    top = main_tabs.mapTo(host, QPoint(0, 0)).y()
    assert bar.geometry().top() == top  # beside the tabs, in their row
    assert [t for t, r in tab_rows() if t is not main_tabs and r.intersects(bar.geometry())] == []
