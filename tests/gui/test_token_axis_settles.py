"""A token axis keeps its layout while the pixels per label move only a little: its own size change moves
the view's size, and without a dead band a narrow map flipped between two font sizes, repainting for ever
(the data-set view's mean-pattern map of the position-free model: 128 repaints a second while idle)."""

from __future__ import annotations

import pyqtgraph as pg

from attnviz.gui.widgets.legible import exporting
from attnviz.gui.widgets.token_axis import TokenAxisItem


def _axis(height: int) -> tuple[TokenAxisItem, pg.ViewBox, pg.GraphicsLayoutWidget]:
    w = pg.GraphicsLayoutWidget()
    vb = pg.ViewBox()
    axis = TokenAxisItem("left")
    w.addItem(axis, 0, 0)
    w.addItem(vb, 0, 1)
    axis.link_view(vb)
    axis.set_labels([f"tok{i}" for i in range(38)])
    vb.setRange(yRange=(0, 38), padding=0)
    w.resize(200, height)
    return axis, vb, w


def _choice(axis):
    return axis.font_factor, axis.angle, axis.stride, axis.major_only


def test_a_small_change_of_room_keeps_the_font_and_a_real_change_recomputes_it(qtbot):
    axis, vb, w = _axis(300)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: vb.height() > 0)
    px = axis._px_per_unit()
    # laid out as an export is: docked, labels never shrink under the 12 px floor (they thin instead)
    with exporting():
        axis._layout()
        first = _choice(axis)
        assert first[0] < 1.0  # crowded: a smaller font was chosen
        # 2 % more or less room (what the axis' own width change does to the view): the same choice
        for scale in (1.02, 0.98):
            axis._px_per_unit = lambda s=scale: px * s
            axis._layout()
            assert _choice(axis) == first
        # a fresh axis at the shifted room may choose differently; this one only changes past the dead band
        axis._px_per_unit = lambda: px * 2.0
        axis._layout()
        assert _choice(axis)[0] > first[0]

