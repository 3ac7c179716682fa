"""The six steps' query chips beside the grouped-query heads diagram (issue 36, real sizes): a 32-query-head
model's diagram asks for ~1,600 px, and in a 1280×720 window's Walkthrough (~980 px) the chips beside it got no
width at all — the query could not be picked. The diagram now goes under the chips when both do not fit, with every
head still drawn; a few heads beside the chips in a wide figure stay side by side (the control)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection, SelectionState  # noqa: E402


def _steps(qtbot, trace, width):
    from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget

    w = WalkthroughWidget(selection=Selection(SelectionState(layer=0, head=1, query=3)))
    qtbot.addWidget(w)
    w.resize(width, 700)
    w.show()
    qtbot.waitExposed(w)
    w.set_trace(trace)
    for _ in range(5):
        QApplication.processEvents()
    return w


def test_thirty_two_heads_go_under_the_chips_in_a_narrow_walkthrough(qtbot):
    trace = sample_trace("decoder", T=12, n_heads=32, d_model=64, n_kv_heads=8)
    w = _steps(qtbot, trace, 980)
    assert w.tokens.width() > 600 and w.tokens.height() > 20  # the chips have the row's width
    assert w.gqa.isVisible() and w.query_row.stacked
    assert w.gqa.geometry().top() >= w.tokens.geometry().bottom()
    assert w.gqa.width() >= w.gqa.minimumSizeHint().width()  # every head drawn


def test_a_few_heads_stay_beside_the_chips_in_a_wide_walkthrough(qtbot):
    trace = sample_trace("decoder", T=12, n_heads=4, d_model=16, n_kv_heads=2)
    w = _steps(qtbot, trace, 1500)
    assert w.gqa.isVisible() and not w.query_row.stacked
    assert w.gqa.geometry().left() >= w.tokens.geometry().right() and w.tokens.width() > 360
