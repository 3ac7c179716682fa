"""A long trace whose selected layer the head map previewed during the forward keeps the preview's map: the overview
rows and tiles the preview computed are handed over when the trace computes the very same numbers (same q, k,
log-sum-exp and score rule) for the same layer and head, and the fill goes on from the preview's last row (at 8,192
tokens the overview was computed again, about a second of grey band). Controls: another head, or a trace whose q
differs in its last bit (or is stored in another dtype), is computed afresh from the trace, never shown from the
preview."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnviz.bench.on_demand_traces import capture_format_trace  # noqa: E402

T = 2048  # above MAX_PX: the trace's map is drawn on demand


@pytest.fixture(scope="module")
def trace():
    return capture_format_trace(T, n_heads=2, d_head=16)


def _preview(trace, q=None):
    """The LayerPreview a capture sends for layer 0 of ``trace``: copies of its q, k and lse (``q``: another q)."""
    from attnviz.capture.on_demand import OnDemandProbs, ScoreRule
    from attnviz.capture.preview import LayerPreview

    src = trace.deferred["L0.probs"]
    rule = ScoreRule(scale=src.rule.scale, causal=True)
    q = np.array(src.q if q is None else q, copy=True)
    return LayerPreview(0, 1, None, tuple(trace.tokens),
                        deferred=OnDemandProbs(q, np.array(src.k, copy=True), np.array(src.lse, copy=True), rule))


def _view(qtbot, head: int):
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    sel = Selection()
    sel.update(layer=0, head=head)
    view = HeadMapView(selection=sel)
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    return view, sel


def _counting(trace, monkeypatch):
    """Rows of whole-width bands (the overview's) the trace is asked for from now on."""
    asked = []
    real = type(trace).probs

    def spy(self, layer, part="self", heads=None, rows=None, cols=None):
        if self is trace and isinstance(rows, slice) and (cols is None or cols == slice(None)):
            asked.append((rows.start, rows.stop))
        return real(self, layer, part, heads, rows, cols)
    monkeypatch.setattr(type(trace), "probs", spy)
    return asked


def _fresh_overview(trace, head: int) -> np.ndarray:
    from attnviz.gui.views.on_demand_map import OnDemandMap

    od = OnDemandMap(trace, 0, "self", head)
    for _ in od.fill_overview():
        pass
    return od.overview


def test_the_previews_overview_is_handed_to_the_trace_not_computed_again(qtbot, trace, monkeypatch):
    view, _ = _view(qtbot, head=1)
    preview = _preview(trace)
    view.show_preview(preview, head=1)
    shown = view.on_demand
    qtbot.waitUntil(lambda: shown.overview_done, timeout=30000)
    tiles = len(shown._tiles)
    asked = _counting(trace, monkeypatch)
    view.set_trace(trace)  # the forward ended: the same layer and head, the same numbers
    od = view.on_demand
    assert od is not shown and od.trace is trace and (od.layer, od.head) == (0, 1)
    assert od.overview_done  # at once: nothing left to fill
    qtbot.wait(100)
    assert asked == []  # no band of the overview asked of the trace
    np.testing.assert_array_equal(od.overview, _fresh_overview(trace, 1))  # bit for bit what the trace computes
    assert len(od._tiles) == tiles
    assert "computing overview" not in view.heatmap.title.text and "forward running" not in view.heatmap.title.text


def test_a_hidden_head_map_cleared_when_the_trace_came_takes_the_preview_over_when_shown(qtbot, trace, monkeypatch):
    """A head map in a background tab is cleared when another input's trace comes (a hidden dock holds no other
    input's figure) and given the trace when shown: the preview's map is kept across, until that trace comes."""
    view, _ = _view(qtbot, head=1)
    view.show_preview(_preview(trace), head=1)
    qtbot.waitUntil(lambda: view.on_demand.overview_done, timeout=30000)
    view.set_trace(None)  # the trace came while the tab was hidden
    assert view.on_demand is None
    asked = _counting(trace, monkeypatch)
    view.set_trace(trace)  # the tab shown
    assert view.on_demand.overview_done and asked == []
    view.set_trace(None)  # control: kept for one trace only; the next map of it is computed from the trace
    view.set_trace(trace)
    qtbot.waitUntil(lambda: view.on_demand.overview_done, timeout=30000)
    assert asked and min(a for a, _ in asked) == 0


def test_a_half_filled_preview_hands_its_rows_and_the_fill_goes_on(qtbot, trace, monkeypatch):
    view, _ = _view(qtbot, head=0)
    view.show_preview(_preview(trace), head=0)
    shown = view.on_demand
    shown.cancel()  # its lane fill stops; fill the first bands here, as far as a forward would let it come
    from attnviz.gui.lane import all_lanes

    # a band already running on the lane would go on once ``cancelled`` is cleared (a loaded machine ran one:
    # the preview then held 512 rows where ``half`` read 256)
    qtbot.waitUntil(lambda: not any(lane.busy for lane in all_lanes()), timeout=30000)
    shown.cancelled = False
    fill = shown.fill_overview(band_rows=256)
    next(fill)
    half = shown.overview_rows
    assert 0 < half < shown.overview.shape[0]
    shown.cancelled = True
    asked = _counting(trace, monkeypatch)
    view.set_trace(trace)
    od = view.on_demand
    qtbot.waitUntil(lambda: od.overview_done, timeout=30000)
    f = 1 << od.overview_level
    assert asked and min(a for a, _ in asked) == half * f  # the rows the preview had are not asked again
    np.testing.assert_array_equal(od.overview, _fresh_overview(trace, 0))


@pytest.mark.parametrize("why", ["another head", "another q", "q stored in float16"])
def test_a_map_of_other_numbers_is_computed_from_the_trace(qtbot, trace, monkeypatch, why):
    from attnviz.gui.views.head_map_preview import same_numbers

    view, _ = _view(qtbot, head=1 if why == "another head" else 0)  # the preview shows head 0 whatever is selected
    q = np.array(trace.deferred["L0.probs"].q, copy=True)
    if why == "another q":
        q[1, 7, 3] = np.nextafter(q[1, 7, 3], np.float32(np.inf))  # one bit of one head's one row
    preview = _preview(trace, q)
    if why == "q stored in float16":
        preview.deferred.q = preview.deferred.q.astype(np.float16)
    view.show_preview(preview, head=0)
    shown = view.on_demand
    qtbot.waitUntil(lambda: shown.overview_done, timeout=30000)
    assert same_numbers(preview, trace, 0, "self") == (why == "another head")
    asked = _counting(trace, monkeypatch)
    view.set_trace(trace)
    od = view.on_demand
    qtbot.waitUntil(lambda: od.overview_done, timeout=30000)
    assert asked and min(a for a, _ in asked) == 0  # every band computed from the trace
    np.testing.assert_array_equal(od.overview, _fresh_overview(trace, od.head))
