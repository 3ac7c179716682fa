"""A turned column label whose text would pass the axis' right end is dropped, not cut (issue 34 Deliver 3: the
last column label "130,934" of a 131,072-token head map was cut in half by the axis item's cache at 1920×1080);
a map labelled column by column keeps every label."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402


class _Metrics:
    def __init__(self, h: float):
        self.h = h

    def height(self) -> float:
        return self.h


def _kept(qapp, positions, width=437.0, overhang=6.98, angle=90.0, h=13.95):
    from attnviz.gui.widgets.token_axis import TokenAxisItem

    axis = TokenAxisItem("bottom")
    axis.rotated, axis.angle = True, angle
    idx = np.arange(len(positions))
    # the bounding rectangle starts left of the axis by the rotated labels' overhang, as boundingRect gives it
    kept, _ = axis._text_positions(idx, np.asarray(positions, float), QRectF(-overhang, 0, width + overhang, 120), _Metrics(h))
    return kept.tolist()


def test_the_last_column_label_of_a_long_map_is_dropped_not_cut(qapp):
    # the measured axis: 437 px, every 3,851st of 131,072 columns; the last one 0.46 px from the end
    assert _kept(qapp, [410.86, 423.7, 436.54]) == [0, 1]


def test_every_column_of_a_map_labelled_column_by_column_keeps_its_label(qapp):
    # control: cells packed at the layout's 92 % of a line, the last label half a cell from the end
    pitch = 13.95 * 0.92
    n = 30
    assert _kept(qapp, (np.arange(n) + 0.5) * pitch, width=n * pitch) == list(range(n))


@pytest.mark.parametrize("angle", [45.0, 90.0])
def test_labels_inside_the_axis_are_all_kept(qapp, angle):
    assert _kept(qapp, [10.0, 200.0, 400.0], angle=angle) == [0, 1, 2]
