"""A long map's masked cells are hatched, as the short map's are; cells not computed yet are not.

The trace (8,192 tokens, causal, probabilities only as blocks) is drawn by the head map's on-demand path; the
hatch outline is checked cell by cell against the causal rule j > i, written out here."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.on_demand_traces import on_demand_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

T = 8192  # above the overview's 4,096 cells: zoomed in, tiles


def _hatched(view, rows, cols) -> np.ndarray:
    """Whether the centre of each data cell (rows[i], cols[i]) lies inside the hatch outline."""
    path = view.heatmap.hatch.path
    return np.array([path.contains(QPointF(c + 0.5, r + 0.5)) for r, c in zip(rows, cols)])


def _cells(view, n=400, seed=0):
    """n random data cells inside the crop on screen, centres of whole drawn cells (pooled levels too)."""
    t = view.tile
    f = 1 << t.level
    rng = np.random.default_rng(seed)
    rows = t.row0 + rng.integers(0, (t.row1 - t.row0) // f, n) * f + f // 2
    cols = t.col0 + rng.integers(0, (t.col1 - t.col0) // f, n) * f + f // 2
    return rows, cols, f


@pytest.fixture
def view(qtbot):
    from attnviz.gui.views.head_map_view import HeadMapView

    v = HeadMapView(selection=Selection())
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    v.set_trace(on_demand_trace(T, n_layers=1, n_heads=1, d_head=8))
    qtbot.waitExposed(v)
    yield v
    if v.on_demand is not None:
        v.on_demand.cancel()


def test_masked_cells_are_hatched_and_not_computed_cells_are_not(qtbot, view):
    od = view.on_demand
    qtbot.waitUntil(lambda: od.overview_done, timeout=120_000)
    view._draw_tile()
    rows, cols, f = _cells(view)
    # a pooled cell is masked when its whole f×f block is: its first column after its last row
    whole_block_masked = (cols - f // 2) > (rows - f // 2 + f - 1)
    np.testing.assert_array_equal(_hatched(view, rows, cols), whole_block_masked)
    assert whole_block_masked.any() and (~whole_block_masked).any()  # both kinds sampled
    assert view.heatmap.bar.show_masked  # the colour bar's "masked" swatch says what the hatch means
    # zoomed in at full resolution with every tile computed: exactly the cells j > i
    view.heatmap.vb.setRange(xRange=(2000, 2200), yRange=(2000, 2200), padding=0)
    QApplication.processEvents()
    qtbot.waitUntil(lambda: view.tile.level == 0 and not od.tiles_for(0, view.tile.row0, view.tile.row1,
                                                                     view.tile.col0, view.tile.col1), timeout=120_000)
    view._draw_tile()
    rows, cols, _ = _cells(view, seed=1)
    np.testing.assert_array_equal(_hatched(view, rows, cols), cols > rows)
    # negative control: the diagonal itself (j = i, a computed weight) is never hatched
    d = np.arange(view.tile.row0, view.tile.row1)
    assert not _hatched(view, d, d).any()


def test_cells_not_computed_yet_are_grey_but_not_hatched(qtbot, view):
    od = view.on_demand
    od.cancel()  # the overview stops: rows past those filled stay not computed
    view.on_demand = od = type(od)(view.trace, 0, "self", 0)  # a fresh, empty overview
    next(od.fill_overview(band_rows=1024))  # only the first 1,024 rows computed
    view._draw_tile()
    t = view.tile
    assert od.overview_rows * (1 << od.overview_level) < T
    rows, cols, f = _cells(view, seed=2)
    filled = rows < od.overview_rows * (1 << od.overview_level)
    hatched = _hatched(view, rows, cols)
    assert (~filled).any() and not hatched[~filled].any()  # not computed: flat grey, no hatch
    assert hatched[filled & ((cols - f // 2) > (rows - f // 2 + f - 1))].all()  # computed and masked: hatched
    # both grey in the image (the masked index): told apart by the hatch alone
    img = view.image_data
    r_cell, c_cell = (rows[~filled] - t.row0) // f, (cols[~filled] - t.col0) // f
    assert (img[r_cell, c_cell] == 255).all()
