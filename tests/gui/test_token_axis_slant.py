"""Slanted (45°) column labels keep a whole line between neighbours (issue 36, the lesson's scene 11 at 1280×720):
packed at 92 % of a line, "5 “,”" (quotes at the top, a comma below the baseline) touched "6 all". Where a
slant would pack them closer than a line they stand upright instead. Control: with room to spare the labels
still slant."""

from __future__ import annotations

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attnviz.gui.widgets.token_axis import TokenAxisItem  # noqa: E402

LABELS = ["0 good", "1 not", "2 food", "3 bad", "4 was", "5 “,”", "6 all", "7 [CLS]", "8 at", "9 the"]


def _laid_out(px: float) -> TokenAxisItem:
    axis = TokenAxisItem("bottom")
    axis.set_labels(LABELS)
    axis._choose_layout(px)
    return axis


def _line(axis) -> float:
    return axis._metrics().height()


def test_slanted_neighbours_are_a_line_apart(qapp):
    probe = TokenAxisItem("bottom")
    probe.set_labels(LABELS)
    h = probe.style.metrics().height()
    for share in (0.93, 0.97, 1.0, 1.04):  # the room scene 11 had: 92–100 % of a line across the slant
        px = h * share / math.sin(math.radians(45))
        axis = _laid_out(px)
        assert axis.stride == 1 and axis.font_factor == 1.0  # every label, at full size
        if axis.angle < 90:  # slanted: the gap across the slant holds a whole line
            assert px * axis.stride * math.sin(math.radians(axis.angle)) >= _line(axis), (share, axis.angle)


def test_labels_still_slant_with_room_to_spare(qapp):
    probe = TokenAxisItem("bottom")
    probe.set_labels(LABELS)
    px = probe.style.metrics().height() * 1.2 / math.sin(math.radians(45))
    assert px < probe._max_text_w() + 6  # not room to lie level
    assert _laid_out(px).angle == 45.0
