"""The head map's on-demand part is a component the view holds (OnDemandHeadMap), with behaviour of its own: a new
map stops the old one's fills, whatever arrives for a map no longer shown redraws nothing, and what arrives
together for the current map is drawn once. Controls: arrivals for the current map do redraw."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QObject  # noqa: E402

from attnviz.bench.on_demand_traces import on_demand_trace  # noqa: E402
from attnviz.gui.views.head_map_on_demand import OnDemandHeadMap  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return on_demand_trace(2048, n_layers=1, n_heads=2, d_head=8)


def test_a_new_map_stops_the_old_one_and_only_the_current_map_redraws(qapp, qtbot, trace):
    owner = QObject()
    redraws = []
    part = OnDemandHeadMap(owner, lambda: redraws.append(part.map))
    old = part.start(trace, 0, "self", 0)
    new = part.start(trace, 0, "self", 1)
    assert old.cancelled and not new.cancelled and part.map is new
    qtbot.waitUntil(lambda: new.overview_done, timeout=20000)  # the views' lane filled the new overview
    qtbot.wait(50)
    assert redraws and all(m is new for m in redraws)  # its bands redrew it; the old map's never did
    assert not old.overview_done  # stopped at its next band
    redraws.clear()
    part._arrived(old)  # a tile of the old map finishing late: nothing drawn
    qtbot.wait(20)
    assert redraws == []
    part._arrived(new)  # control: the current map's tiles redraw it, once for all that came together
    part._arrived(new)
    qtbot.wait(20)
    assert redraws == [new]


def test_dropping_the_map_cancels_it_and_nothing_redraws_after(qapp, qtbot, trace):
    owner = QObject()
    redraws = []
    part = OnDemandHeadMap(owner, lambda: redraws.append(1))
    od = part.start(trace, 0, "self", 0)
    part._arrived(od)  # queued while the map is shown ...
    part.drop()  # ... then a short map replaces it before the queue runs
    qtbot.wait(50)
    assert od.cancelled and part.map is None and redraws == []
    assert not part.fill_now() and not part.compute_shown()  # no map: nothing to finish
