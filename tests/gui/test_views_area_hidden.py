"""Docks behind a tab are not redrawn by new traces (keystrokes) and show the newest trace when brought forward."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.panels.views_area import ViewsArea  # noqa: E402
from attnviz.gui.style import ViewStyle  # noqa: E402
from attnviz.gui.views.base import BaseView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


class _Counting(BaseView):
    """A view that records every trace it is asked to draw."""

    title = "counting"

    def _build(self) -> None:
        self.drawn = []

    def _trace_changed(self) -> None:
        self.drawn.append(self.trace)

    def _style_changed(self) -> None:
        pass


class FirstView(_Counting):
    title = "first"


class SecondView(_Counting):
    title = "second"


def test_a_hidden_dock_is_not_redrawn_by_new_traces_but_is_current_when_shown(qtbot):
    area = ViewsArea()
    qtbot.addWidget(area)
    area.resize(800, 500)
    area.show()
    qtbot.waitExposed(area)
    area.install([FirstView, SecondView], Selection(), ViewStyle())
    first, second = (area.docks[n].widget() for n in ("FirstView", "SecondView"))
    area.tabifyDockWidget(area.docks["FirstView"], area.docks["SecondView"])
    area.docks["FirstView"].raise_()
    qtbot.waitUntil(lambda: area.visible_views() == [first], timeout=3000)
    traces = [sample_trace("decoder", T=t) for t in (5, 6, 7, 8)]
    first.drawn.clear()
    second.drawn.clear()
    for trace in traces:  # typing: a new trace per key
        area.set_trace(trace)
        QApplication.processEvents()
    assert first.drawn == traces  # the view on screen draws every one
    assert second.trace is None and all(t is None for t in second.drawn) and len(second.drawn) <= 1
    area.docks["SecondView"].raise_()
    qtbot.waitUntil(lambda: second in area.visible_views(), timeout=3000)
    assert second.trace is traces[-1] and second.drawn[-1] is traces[-1]  # current as soon as it is seen
    before = len(first.drawn)
    area.set_trace(traces[0])
    area.set_trace(traces[1])
    # now the first one waits behind the tab: cleared once (never another input's figure), not drawn
    assert first.drawn[before:] == [None] and first.trace is None
