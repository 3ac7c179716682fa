"""At 16,384 tokens nothing builds (H, T, T): the views ask the trace for the blocks they draw.

The trace's probabilities exist only as blocks exp(s − lse) of random q and k; asking for the whole map
raises (``WholeMapAsked``), so a view that still reads ``trace[prefix + "probs"]`` fails here. Values are
checked against an independent float64 softmax of q·kᵀ recomputed in this file.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.on_demand_traces import WholeMapAsked, on_demand_trace  # noqa: E402
from attnviz.gui.views.heatmap_data import block_max, quantize  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

T = 16_384


@pytest.fixture(scope="module")
def trace():
    return on_demand_trace(T, n_layers=2, n_heads=2, d_head=8)


def exact_rows(trace, layer: int, head: int, rows: slice) -> np.ndarray:
    """Independent recomputation: a causal float64 softmax of q·kᵀ·scale over whole rows."""
    q = trace.arrays[f"L{layer}.q"][head].astype(np.float64)  # (T, dh)
    k = trace.arrays[f"L{layer}.k"][head].astype(np.float64)
    s = q[rows] @ k.T * trace.meta["scale"]  # (r, T)
    idx = np.arange(T)[rows]
    s[np.arange(T)[None, :] > idx[:, None]] = -np.inf
    s -= s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=1, keepdims=True)


def test_the_whole_map_is_refused(trace):  # the guard the other tests rely on
    with pytest.raises(WholeMapAsked):
        trace["L0.probs"]
    with pytest.raises(WholeMapAsked):
        trace.probs(0)


def test_head_map_fills_an_overview_and_draws_exact_tiles(qtbot, trace):
    from attnviz.gui.views.head_map_view import HeadMapView

    sel = Selection()
    view = HeadMapView(selection=sel)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.set_trace(trace)  # would raise WholeMapAsked if it read the map whole
    qtbot.waitExposed(view)
    od = view.on_demand
    assert od is not None and view.probs is None
    qtbot.waitUntil(lambda: od.overview_rows >= 16, timeout=120_000)
    # the first band of the overview: each cell the maximum of its F×F block of the exact map
    f = 1 << od.overview_level
    assert f == 4  # OVERVIEW_SIDE: 4,096 cells a side
    band = exact_rows(trace, 0, 0, slice(0, 16 * f))
    np.testing.assert_allclose(od.overview[:16], block_max(band, f, f), atol=1e-6)
    assert "computing overview" in view.heatmap.title.text or od.overview_done
    # zoomed in: level 0, every drawn value exact (masked cells: exactly 0 → the masked index)
    r0, c0 = 5000, 4900
    view.heatmap.vb.setRange(xRange=(c0, c0 + 200), yRange=(r0, r0 + 200), padding=0)
    QApplication.processEvents()
    qtbot.waitUntil(lambda: view.tile.level == 0 and not od.tiles_for(0, view.tile.row0, view.tile.row1,
                                                                     view.tile.col0, view.tile.col1), timeout=120_000)
    view._draw_tile()
    t = view.tile
    exact = exact_rows(trace, 0, 0, slice(t.row0, t.row1))[:, t.col0:t.col1]
    expected = quantize(exact.astype(np.float32), view.vmax, exact == 0)
    got = view.image_data.astype(int)
    assert got.shape == expected.shape
    assert np.abs(got - expected.astype(int)).max() <= 1  # float32 blocks vs float64: a rounding step at most
    assert (got == 255).sum() == (expected == 255).sum() > 0  # the causal triangle is drawn masked
    # negative control: the transposed map (a wrong row/column order) is not what is drawn
    wrong = quantize(exact_rows(trace, 0, 0, slice(t.col0, t.col1))[:, t.row0:t.row1].T.astype(np.float32), view.vmax)
    assert np.abs(got - wrong.astype(int)).max() > 1
    # hover: the exact value of one cell
    text = view.cell_text(5100, 5050)
    value = exact_rows(trace, 0, 0, slice(5100, 5101))[0, 5050]
    assert text.endswith(f"{value:.6f}" if value >= 1e-4 else f"{value:.3e}")
    sel.update(head=1)  # a head switch starts that head's own overview
    assert view.on_demand is not od and view.on_demand.head == 1 and od.cancelled
    view.on_demand.cancel()


def test_token_lines_draw_a_window_around_the_query(qtbot, trace):
    from attnviz.gui.views.token_lines_view import TokenLinesView

    sel = Selection()
    view = TokenLinesView(selection=sel)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.set_trace(trace)
    sel.update(query=9000)
    assert view._shown_window == (8900, 9100)
    assert "positions 8900–9099 of 16,384 around the query" in view._title
    assert view.lines.weights.shape == (2, 200, 200) and view.lines.selected == 100
    exact = exact_rows(trace, 0, 1, slice(8900, 9100))[:, 8900:9100]
    np.testing.assert_allclose(view.lines.weights[1], exact, atol=1e-6)
    assert "[9000]" in view.token_text("left", 100)  # positions are the input's, not the window's


def test_model_view_of_a_deep_long_trace_pools_the_page_on_screen(qtbot):
    """Beyond the budget of every head at once, the grid is laid out for every head and the page on screen is
    max-pooled head by head on the views' lane (was: one line and no grid); tests/gui/test_all_heads_long_pages.py
    checks the tiles."""
    from attnviz.gui.views.model_view import ModelView

    deep = on_demand_trace(T, n_layers=8, n_heads=4, d_head=8)  # 8 × 4 heads at 16,384: beyond the grid's budget
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    view.set_trace(deep)
    assert view.grid.layers_heads == (8, 4) and view.grid.drawn()  # a page of tiles, filled as heads come
    assert "computing from q and k: 0 of" in view.title_item.text
    assert view.caption.text.startswith("max-pooled to 64×64 cells of 256×256 positions each")
    assert view.background_pending and view.stats is None
    view.cancel_background()


def test_model_view_of_a_short_on_demand_trace_draws_the_grid(qtbot):  # negative control of the refusal
    from attnviz.gui.views.model_view import ModelView

    short = on_demand_trace(300, n_layers=2, n_heads=2, allow_full=True)
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.show()
    view.set_trace(short)
    assert view.thumbs is not None and view.thumbs.images.shape[:2] == (2, 2)


def test_walkthrough_opening_reads_one_row_per_layer(trace):
    from attnviz.analysis.walkthrough_default import walkthrough_default

    layer, head, query = walkthrough_default(trace)
    assert query == T - 1 and 0 <= layer < 2 and 0 <= head < 2
