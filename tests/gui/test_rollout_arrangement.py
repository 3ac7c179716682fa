"""The rule that arranges the rollout view's image panels (rollout_arrangement.py), on the rooms it was made for:
a 16:9 slide's body (the input beside the maps: a row there covered 30 % of the page), a wide low dock (one row:
two by two drew 126-px maps in a 950 × 350 px dock) and a squarer dock (two by two)."""

from __future__ import annotations

import pytest

from attnviz.gui.views.rollout_arrangement import MAP_SLACK, choose, estimates

# room (w, h) in layout px, the captions' heights, a bar's width with its gap
SLIDE, WIDE_DOCK, SQUARE_DOCK = (1049, 537), (948, 347), (710, 515)


def _pick(room, per_map=False):
    found = estimates(*room, 1.0, 36.0, 36.0, 85.0, per_map, 6.0)
    return choose(found), {e.name: e for e in found}


@pytest.mark.parametrize("room,expected", [(SLIDE, "beside"), (WIDE_DOCK, "row"), (SQUARE_DOCK, "grid")])
def test_each_room_gets_its_arrangement(room, expected):
    name, found = _pick(room)
    assert name == expected, found
    largest = max(e.map_side for e in found.values())
    assert found[name].map_side >= MAP_SLACK * largest  # the maps stay within the slack of the largest


def test_on_a_slide_the_input_beside_the_maps_covers_far_more():
    _, found = _pick(SLIDE)
    beside, row = found["beside"], found["row"]
    assert beside.area > 1.4 * row.area and beside.input_side > 1.5 * beside.map_side, found
    assert beside.map_side >= MAP_SLACK * row.map_side, found


def test_per_map_bars_take_width_from_a_row():
    """Control: three bars cost a row more width than one; the estimate sees it."""
    assert _pick(WIDE_DOCK, per_map=True)[1]["row"].map_side < _pick(WIDE_DOCK)[1]["row"].map_side


def test_nothing_fits_falls_back_to_two_by_two():
    assert choose(estimates(40, 30, 1.0, 36.0, 36.0, 85.0, False, 6.0)) == "grid"
