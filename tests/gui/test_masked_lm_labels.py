"""The masked-lm figure's token labels under the bars follow the bars' width as the window settles, and never
drop below the legible floor (presented on a 1080-line screen: 12 px). They were drawn at the 5 pt minimum from a
width measured before the layout settled (seen in the live lesson at 1920×1080)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QWidget  # noqa: E402

from attnviz.gui.style import ViewStyle  # noqa: E402
from attnviz.gui.views.masked_lm_view import MaskedLMView  # noqa: E402
from attnviz.gui.widgets.legible import floor_pt  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    import attnviz

    return attnviz.load("masked-lm").trace("the meal was [MASK] , not bad at all").trace


def test_labels_grow_with_the_window_and_keep_the_floor(qtbot, trace):
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(1900, 1000)
    view = MaskedLMView(selection=Selection(), parent=host)
    view.set_style(ViewStyle.preset_named("presentation"))
    view.resize(200, 300)  # laid out narrow first, as a dock is before the window settles
    host.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.tick_pt is not None, timeout=10000)
    narrow = view.tick_pt
    view.resize(1880, 900)
    qtbot.waitUntil(lambda: view.tick_pt is not None and view.tick_pt > narrow, timeout=10000)
    assert view.tick_pt == pytest.approx(view.style.font().pointSizeF())  # room for every word at full size
    assert narrow >= floor_pt(view.style, view) - 1e-6  # never under the floor
