"""Every view keeps the common contract on every kind of trace: selection, style, None, export
(the check itself: tests/gui/view_contract.py, shared with the data-set views' tests)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.views import VIEW_CLASSES  # noqa: E402
from attnviz.selection import Selection  # noqa: E402
from tests.gui.view_contract import check_view_contract, contract_traces, svg_texts  # noqa: E402


@pytest.fixture(scope="module")
def traces():
    return contract_traces()


@pytest.mark.parametrize("cls", VIEW_CLASSES, ids=[c.__name__ for c in VIEW_CLASSES])
def test_view_contract(qtbot, cls, traces):
    check_view_contract(qtbot, cls, traces)


WALKTHROUGH = ("WalkthroughWidget", "MatrixFormWidget", "WhatIfPanel", "SandboxWidget")


def _walkthrough_view(name: str, sel: Selection):
    from attnviz.gui import walkthrough

    style = PRESETS["default"]
    if name == "SandboxWidget":  # its own toy input: it takes no selection
        return walkthrough.SandboxWidget(style=style)
    if name == "WhatIfPanel":  # re-runs on this thread (no model here: it says what it needs)
        return walkthrough.WhatIfPanel(run_async=walkthrough.sync_runner, selection=sel, style=style)
    return getattr(walkthrough, name)(selection=sel, style=style)


def _painted(view, width: int, height: int, scale: float) -> QImage:
    img = QImage(width, height, QImage.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    view.render_figure(painter, QRectF(0, 0, width, height), scale=scale)
    painter.end()
    return img


def _colours(img: QImage) -> int:
    """Distinct colours over every pixel (a blank figure has one; text alone brings its anti-aliasing shades)."""
    import numpy as np

    return len(np.unique(np.frombuffer(img.constBits(), dtype=np.uint32, count=img.width() * img.height())))


@pytest.mark.parametrize("name", WALKTHROUGH)
def test_walkthrough_widgets_keep_the_view_contract(qtbot, name, traces):
    from attnviz.gui.views import BaseView

    sel = Selection()
    view = _walkthrough_view(name, sel)
    qtbot.addWidget(view)
    assert isinstance(view, BaseView)
    view.resize(1000, 700)
    view.show()
    for kind, trace in traces.items():
        view.set_trace(trace)
        for changes in ({"layer": 1, "head": 3, "query": 2}, {"part": "cross"}, {"part": "enc"},
                        {"part": "self", "query": None}, {"layer": 5, "head": 9}):  # out of range stays valid
            sel.update(**changes)
        QApplication.processEvents()
    if view.follows_selection:  # the shared selection, not a copy
        assert view.selection is sel and view.state == sel.state
    else:  # control: a widget that follows no selection does not see it move
        assert view.selection is None and view.state != sel.state
    view.set_style(PRESETS["presentation"])
    view.set_style(PRESETS["dark"])
    QApplication.processEvents()
    assert svg_texts(view), f"{name} exported no text"
    # any painter at any size: a small and a slide-sized image, re-flowed (scale 1) and enlarged (scale 2)
    for width, height, scale in ((800, 500, 1.0), (1920, 1080, 2.0)):
        assert _colours(_painted(view, width, height, scale)) > 3, (name, width, height, scale)
    view.set_trace(None)
    QApplication.processEvents()


@pytest.mark.parametrize("name", ("WalkthroughWidget", "MatrixFormWidget"))
def test_walkthrough_figures_follow_the_shared_selection(qtbot, name, traces):
    sel = Selection()
    view = _walkthrough_view(name, sel)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_trace(traces["decoder"])
    sel.update(layer=0, head=0, query=4)
    QApplication.processEvents()
    before = _painted(view, 900, 600, 1.0)
    assert _painted(view, 900, 600, 1.0) == before  # control: the same selection draws the same figure
    sel.update(layer=1, head=2)  # moved elsewhere (another view, the keyboard): this figure follows
    QApplication.processEvents()
    assert _painted(view, 900, 600, 1.0) != before
