"""A token axis laid out while its figure is being deleted: the scene it reads may already be gone (a view
box's range changed during the deletion). It falls back to a 1080-line screen's floor instead of raising."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
import shiboken6
from PySide6.QtWidgets import QGraphicsScene

from attnviz.gui.widgets.legible import floor_pt
from attnviz.gui.widgets.token_axis import TokenAxisItem


def _expected(axis: TokenAxisItem, widget) -> float:
    return min(1.0, max(axis.MIN_FACTOR, floor_pt(axis.style, widget) / axis.style.font_pt()))


def test_a_deleted_scene_gives_the_floor_without_a_view(qtbot, monkeypatch):
    w = pg.GraphicsLayoutWidget()
    qtbot.addWidget(w)
    axis = TokenAxisItem("left")
    w.addItem(axis, 0, 0)
    axis.set_labels([f"tok{i}" for i in range(40)])
    assert axis._first_view() is w  # alive: the scene's own view is read
    assert axis._min_factor() == pytest.approx(_expected(axis, w))
    dead = QGraphicsScene()
    shiboken6.delete(dead)
    with pytest.raises(RuntimeError):  # control: what the unguarded read did with such a scene
        dead.views()
    monkeypatch.setattr(axis, "scene", lambda: dead)
    assert axis._first_view() is None
    assert axis._min_factor() == pytest.approx(_expected(axis, None))
    axis._choose_layout(3.0)  # a crowded layout reads the floor: no error
    assert axis.font_factor >= axis.MIN_FACTOR
