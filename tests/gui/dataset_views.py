"""Shared by the data-set views' tests: a view of ``cls`` on its own selection, shown at 1300 × 700."""

from __future__ import annotations

from attnviz.selection import Selection


def make(qtbot, cls, trace):
    sel = Selection()
    view = cls(selection=sel)
    qtbot.addWidget(view)
    view.resize(1300, 700)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(trace)
    return view, sel
