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
