"""A zoom in on the long head map computes, while the view is still drawn from a coarser level, the first tiled
level's tiles that zoom shows first: around the point the zoom keeps fixed (a wheel zoom's pointer), from up to two
levels above it (the level above the overview's zooms in through the overview to the first tiled level).

Checked on the geometry (zoom_ahead.py, against a zoom built about a known point) and on a zoom path that computes
a fixed number of tiles between frames (a busy machine): its first frame at the finer level lacks no tile.
Controls: a pan or a zoom out has no fixed point (the middle is used); the previous rule (every tile under the view,
nearest its middle, from 1.5× the finer level's zoom) leaves that frame lacking tiles; a view three levels above
the first tiled one asks for none."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.gui.views.on_demand_map import OnDemandMap
from attnviz.gui.views.tile_cache import tile_cells
from attnviz.gui.views.zoom_ahead import next_level_window, zoom_anchor

PX = 800  # the view's pixels a side
NOTCH = 1.35  # a mouse wheel notch zooms in by this factor


def _about(view, anchor, s):
    """``view`` scaled by ``s`` about ``anchor`` (the test's own statement of a zoom)."""
    (r0, r1, c0, c1), (ar, ac) = view, anchor
    return ar + (r0 - ar) * s, ar + (r1 - ar) * s, ac + (c0 - ac) * s, ac + (c1 - ac) * s


@settings(max_examples=200, deadline=None)
@given(r0=st.floats(0, 12000), c0=st.floats(0, 12000), span=st.floats(64, 8000), fr=st.floats(0, 1),
       fc=st.floats(0, 1), s=st.floats(0.2, 0.97))
def test_the_anchor_is_the_point_a_zoom_kept_fixed(r0, c0, span, fr, fc, s):
    view = (r0, r0 + span, c0, c0 + 1.25 * span)
    point = (r0 + fr * span, c0 + fc * 1.25 * span)  # anywhere in the view: where the pointer was
    ar, ac = zoom_anchor(view, _about(view, point, s))
    assert abs(ar - point[0]) <= 1e-6 * span and abs(ac - point[1]) <= 1e-6 * span


def test_a_pan_a_zoom_out_and_a_first_view_have_no_fixed_point_the_middle_is_used():
    view = (1000.0, 3000.0, 500.0, 2500.0)
    assert zoom_anchor(None, view) == (2000.0, 1500.0)
    assert zoom_anchor((1200.0, 3200.0, 700.0, 2700.0), view) == (2000.0, 1500.0)  # panned: spans unchanged
    zoomed_out = _about(view, (1100.0, 600.0), 1.35)
    assert zoom_anchor(view, zoomed_out) == ((zoomed_out[0] + zoomed_out[1]) / 2, (zoomed_out[2] + zoomed_out[3]) / 2)
    # control: the same views the other way round are a zoom in about that point
    assert np.allclose(zoom_anchor(zoomed_out, view), (1100.0, 600.0))


def test_the_finer_levels_window_is_the_same_all_along_a_zoom_and_is_where_it_begins():
    start, anchor = (4000.0, 9000.0, 2000.0, 7000.0), (8000.0, 6200.0)
    per_px0 = 5000.0 / PX
    windows = []
    for k in range(4):
        view = _about(start, anchor, NOTCH ** -k)
        windows.append(next_level_window(view, anchor, per_px0 / NOTCH ** k, 2.0))
    np.testing.assert_allclose(windows, [windows[0]] * 4, rtol=0, atol=1e-6)
    # where the zoom reaches 2 rows a pixel: a 1,600-row view, the anchor as far along it as in the first view
    r0, r1, c0, c1 = windows[0]
    assert np.isclose(r1 - r0, 2 * PX) and np.isclose((anchor[0] - r0) / (r1 - r0), 0.8)
    assert np.isclose((anchor[1] - c0) / (c1 - c0), 0.84)
    # control: scaling about each view's middle instead gives a window that moves as the zoom goes on
    middles = []
    for k in range(4):
        view = _about(start, anchor, NOTCH ** -k)
        middle = ((view[0] + view[1]) / 2, (view[2] + view[3]) / 2)
        middles.append(next_level_window(view, middle, per_px0 / NOTCH ** k, 2.0))
    assert not np.allclose(middles, [middles[0]] * 4, atol=1.0)


class _PreviousRule(OnDemandMap):
    """The zoom ahead before: every finer tile under the view, nearest its middle, from 1.5× that level's zoom."""

    def _zoom_ahead(self, level, per_px, asked):
        if level == 0 or level > self.overview_level or per_px > 1.5 * (1 << (level - 1)):
            return []
        f, n = 1 << (level - 1), tile_cells(level - 1)
        r0, r1 = max(0, int(asked[0])) // f, -(-min(self.tq, int(np.ceil(asked[1]))) // f)
        c0, c1 = max(0, int(asked[2])) // f, -(-min(self.tk, int(np.ceil(asked[3]))) // f)
        mid_r, mid_c = (r0 + r1) / 2 / n, (c0 + c1) / 2 / n
        return sorted(self.tiles_for(level - 1, r0, r1, c0, c1),
                      key=lambda k: (k[1] + 0.5 - mid_r) ** 2 + (k[2] + 0.5 - mid_c) ** 2)


def _first_finer_frame(od: OnDemandMap, per_frame: int):
    """Wheel-zoom about a point near the view's lower right, computing ``per_frame`` wanted tiles between frames
    (as a pump does on a busy machine); the tiles the first level-1 frame lacks, and that frame's visible tiles."""
    start, anchor = (4000.0, 9000.0, 2000.0, 7000.0), (8000.0, 6200.0)  # 6.25 rows a pixel: level 3
    for k in range(12):
        tile, _, missing = od.view(*_about(start, anchor, NOTCH ** -k), PX, PX)
        if tile.level == 1:
            f, n = 2, tile_cells(1)
            shown = {(1, i, j) for i in range(tile.row0 // f // n, -(-tile.row1 // f // n))
                     for j in range(tile.col0 // f // n, -(-tile.col1 // f // n))}
            return missing, shown
        od.want(missing, od.last_zoom_ahead + od.last_ring)
        pump = od.pump()
        for _ in zip(range(per_frame), pump):
            pass
        pump.close()
    raise AssertionError("the zoom never reached level 1")


def test_a_wheel_zoom_finds_the_finer_levels_tiles_computed_when_it_gets_there():
    trace = on_demand_trace(16384, n_layers=1, n_heads=1, d_head=8)  # overview level 2: level 1 in tiles
    od = OnDemandMap(trace, 0, "self", 0)
    assert od.overview_level == 2
    missing, shown = _first_finer_frame(od, per_frame=40)
    assert len(shown) >= 36 and missing == []  # every visible tile of the first level-1 frame was computed ahead
    assert np.allclose(od.anchor, (8000.0, 6200.0))  # the pointer recovered from the views alone
    # control: the previous rule computes as many tiles between frames and the same frame lacks some
    before = _PreviousRule(trace, 0, "self", 0)
    missing_before, shown_before = _first_finer_frame(before, per_frame=40)
    assert shown_before == shown and len(missing_before) >= 5


def test_a_redraw_for_tiles_that_came_keeps_the_zooms_anchor():
    trace = on_demand_trace(16384, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)
    start, anchor = (4000.0, 9000.0, 2000.0, 7000.0), (8000.0, 6200.0)
    od.view(*start, PX, PX)
    assert od.anchor == (6500.0, 4500.0)  # a first view: its middle
    zoomed = _about(start, anchor, NOTCH ** -2)  # two notches in one frame: 3.4 rows a pixel, level 2
    od.view(*zoomed, PX, PX)
    ahead = od.last_zoom_ahead
    assert ahead and np.allclose(od.anchor, anchor)
    od.view(*zoomed, PX, PX)  # the same range again: tiles arrived
    assert np.allclose(od.anchor, anchor) and od.last_zoom_ahead == ahead
    od.view(zoomed[0], zoomed[1], zoomed[2] + 500, zoomed[3] + 500, PX, PX)  # control: a pan (columns only)
    assert np.allclose(od.anchor, ((zoomed[0] + zoomed[1]) / 2, (zoomed[2] + zoomed[3]) / 2 + 500))


def test_a_wheel_zooms_visible_tiles_come_nearest_the_pointer_first():
    trace = on_demand_trace(16384, n_layers=1, n_heads=1, d_head=8)
    missing, _ = _first_finer_frame(OnDemandMap(trace, 0, "self", 0), per_frame=0)  # nothing computed ahead
    s = tile_cells(1) * 2  # map rows a level-1 tile covers
    assert missing[0] == (1, 8000 // s, 6200 // s)  # under the pointer: it stays on screen as the zoom goes on
    # control: the same view drawn first (no zoom before it) starts from its middle
    fresh = OnDemandMap(trace, 0, "self", 0)
    start, anchor = (4000.0, 9000.0, 2000.0, 7000.0), (8000.0, 6200.0)
    view = next(v for v in (_about(start, anchor, NOTCH ** -k) for k in range(12))
                if fresh.view(*v, PX, PX)[0].level == 1)
    first = OnDemandMap(trace, 0, "self", 0)
    _, _, missing_first = first.view(*view, PX, PX)
    middle = ((view[0] + view[1]) / 2 // s, (view[2] + view[3]) / 2 // s)
    assert missing_first[0] == (1, *map(int, middle)) and missing_first[0] != missing[0]


def test_a_view_above_the_overviews_level_asks_for_the_first_tiled_levels_tiles_two_levels_ahead():
    trace = on_demand_trace(16384, n_layers=1, n_heads=1, d_head=8)
    od = OnDemandMap(trace, 0, "self", 0)  # overview level 2: level 3 zooms in through it to level 1, in tiles
    start, anchor = (4000.0, 9000.0, 2000.0, 7000.0), (8000.0, 6200.0)
    od.view(*start, PX, PX)
    tile, _, missing = od.view(*_about(start, anchor, 1 / NOTCH), PX, PX)  # 4.6 rows a pixel: level 3
    assert tile.level == 3 and missing == []
    ahead = od.last_zoom_ahead
    r0, r1, c0, c1 = _about(start, anchor, 2 / 6.25)  # the view where the zoom reaches 2 rows a pixel (level 1)
    s = tile_cells(1) * 2
    window = {(1, i, j) for i in range(int(r0) // s, -(-int(np.ceil(r1)) // s))
              for j in range(int(c0) // s, -(-int(np.ceil(c1)) // s))}
    assert ahead and set(ahead) == window and ahead[0] == (1, 8000 // s, 6200 // s)
    # control: three levels above the first tiled one (a zoomed-out view) asks for none
    od.view(0.0, 16384.0, 0.0, 16384.0, PX, PX)
    assert od.view(0.0, 6000.0, 0.0, 6000.0, PX, PX)[0].level == 3 and od.last_zoom_ahead  # level 3: some
    assert od.view(0.0, 12000.0, 0.0, 12000.0, PX, PX)[0].level == 4 and od.last_zoom_ahead == []
