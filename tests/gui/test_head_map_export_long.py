"""An exported long head map is complete: the figure's overview (and a zoomed view's own tiles) is computed
before the file is drawn, not left to the views' lane (the CLI's 8,190-token PNG said "computing overview: 256
of 8,190 rows" and was grey below). Checked on the view as export builds it, before any event is processed."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.bench.on_demand_traces import on_demand_trace  # noqa: E402
from attnviz.figures.registry import make_figure  # noqa: E402
from attnviz.selection import SelectionState  # noqa: E402
from test_head_map_long import indices, reference_blocks  # noqa: E402

T = 2048  # above the 1,024 tokens drawn whole: probabilities only as blocks, drawn on demand


def test_an_exported_long_map_has_its_whole_overview(qapp):
    trace = on_demand_trace(T, n_layers=1, n_heads=2, d_head=8)
    view, _sel = make_figure("head-map", trace, SelectionState(layer=0, head=1))
    try:
        od = view.on_demand
        assert od is not None and od.overview_done
        assert "computing overview" not in view.heatmap.title.text
        t = view.tile
        f = 1 << t.level
        whole = np.concatenate([trace.probs(0, "self", heads=[1], rows=slice(r, r + 512))[0]
                                for r in range(0, T, 512)]).astype(np.float64)  # (T, T), in row blocks
        expected = indices(reference_blocks(whole, f, t.row0, t.row1, t.col0, t.col1), view.vmax)
        shown = view.image_data != 255  # masked cells are drawn apart (hatched)
        np.testing.assert_array_equal(view.image_data[shown], expected[shown])
        assert (view.image_data[-1] != 255).any()  # the last rows are drawn, not left grey (the bug's picture)
    finally:
        view.close()
        view.deleteLater()


def test_without_it_the_lane_has_not_filled_the_overview(qapp):
    """The control: the same view built without ``ensure_current`` still waits for the lane."""
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    trace = on_demand_trace(T, n_layers=1, n_heads=2, d_head=8)
    view = HeadMapView(selection=Selection(SelectionState(layer=0, head=1)))
    try:
        view.set_trace(trace)
        assert view.on_demand is not None and not view.on_demand.overview_done
        assert "computing overview" in view.heatmap.title.text
    finally:
        view.close()
        view.deleteLater()
