"""ModelView: every head's thumbnail, statistics equal to a numpy recomputation, clicks select.

The 12×12 test draws and updates a full grid of 144 tiles (one TileGrid item since issue 18; with an
ImageItem per tile PySide6 6.12.0 crashed there with pyqtgraph, we pin 6.11.x): a future release that
breaks drawing it fails here.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from attnviz.gui.style import colour_lut  # noqa: E402
from attnviz.gui.views.model_view import ModelView  # noqa: E402
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def make(qtbot, trace, size=(1200, 800)):
    sel = Selection()
    view = ModelView(selection=sel)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.stats is not None, timeout=20000)
    return view, sel


def indices(p, top) -> np.ndarray:
    """Independent recomputation of the colour indices: round(p / top · 254)."""
    return np.floor(np.clip(np.asarray(p, np.float64) / top * 254, 0, 254) + 0.5).astype(np.uint8)


def entropy_numpy(p: np.ndarray) -> np.ndarray:
    """(H, T, T) → (H,): mean over queries of −Σ p log p (0 log 0 = 0)."""
    p = p.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return terms.sum(-1).mean(-1)


def test_thumbnails_and_statistics(qtbot):
    trace = sample_trace("encoder", T=10, n_layers=3, n_heads=4)
    view, sel = make(qtbot, trace)
    thumbs = view.thumbs
    assert thumbs.vmax == 1.0 and view.bar.levels == (0.0, 1.0)  # fixed 0–1 unless chosen otherwise
    assert "fixed scale 0–1" in view.bar.label
    for layer in range(3):
        p = trace[f"L{layer}.probs"]
        np.testing.assert_array_equal(thumbs.images[layer], indices(p, 1.0))
    view.scale_box.set_mode("shared")  # the grid's largest weight at the top
    vmax = max(float(trace[f"L{i}.probs"].max()) for i in range(3))
    assert view.thumbs.vmax == pytest.approx(vmax) and view.bar.levels == (0.0, pytest.approx(vmax))
    for layer in range(3):
        np.testing.assert_array_equal(view.thumbs.images[layer], indices(trace[f"L{layer}.probs"], vmax))
    view.scale_box.set_mode("per-map")  # every tile reaches the top colour at its own maximum
    assert view.bar.levels == (0.0, 1.0) and "own maximum" in view.bar.label
    for layer in range(3):
        for h in range(4):
            p = trace[f"L{layer}.probs"][h]
            np.testing.assert_array_equal(view.thumbs.images[layer, h], indices(p, float(p.max())))
    view.scale_box.set_mode("fixed")
    for layer in range(3):
        p = trace[f"L{layer}.probs"]
        np.testing.assert_allclose(view.stats.entropy[layer], entropy_numpy(p), rtol=1e-9)
        idx = np.arange(10)
        dist = np.abs(idx[:, None] - idx[None, :])
        np.testing.assert_allclose(view.stats.distance[layer], (p * dist).sum(-1).mean(-1), rtol=1e-6)
        for h in range(4):  # the grid item draws the colourised thumbnail
            tile = view.grid.tile(layer, h)
            assert tile.shape == (10, 10, 4)
            np.testing.assert_array_equal(tile, colour_lut(view.style)[view.thumbs.images[layer, h]])
    note = view.note_text(2, 1)
    assert note == f"{view.stats.entropy[2, 1]:.2f} · {view.stats.distance[2, 1]:.1f}"
    assert f"{view.stats.entropy[1, 3]:.4f}" in view.head_info(1, 3)


def test_click_thumbnail_and_table_select_the_head(qtbot):
    trace = sample_trace("decoder", T=8, n_layers=2, n_heads=4)
    view, sel = make(qtbot, trace)
    view.grab()
    middle = view.grid.tile_rect(1, 2).center()  # the middle of tile (layer 1, head 2)
    pos = view.widget_pos(view.vb, middle.x(), middle.y())
    qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=pos)
    assert (sel.layer, sel.head) == (1, 2)
    grid = view.grid  # the tile under a point; none in the gaps (the notes' row, between columns)
    assert grid.index_at(2 * 1.12 + 0.99, 1 * 1.42 + 0.01) == (1, 2)
    assert grid.index_at(2 * 1.12 + 1.05, 1.5) is None and grid.index_at(0.5, 1.2) is None
    assert grid.index_at(-0.1, 0.5) is None and grid.index_at(4 * 1.12 + 0.5, 0.5) is None
    assert view.marks[0].isVisible() and view.top.selected == 2 and view.left.selected == 1
    view.show_table(True)
    assert view.table.isVisible() and not view.canvas.isVisible()
    assert view.table.rowCount() == 8
    view.table.sortItems(2, Qt.DescendingOrder)  # by entropy: numeric, not text order
    values = [float(view.table.item(r, 2).data(Qt.DisplayRole)) for r in range(8)]
    assert values == sorted(values, reverse=True)
    layer, head = view.table.item(0, 0).data(Qt.UserRole)
    view.table.cellClicked.emit(0, 0)
    assert (sel.layer, sel.head) == (layer, head)
    assert view.stats.entropy[layer, head] == pytest.approx(max(values), abs=1e-4)


def test_full_12x12_grid_draws_and_updates(qtbot):
    first = sample_trace("encoder", T=16, n_layers=12, n_heads=12, d_model=48, seed=0)
    second = sample_trace("encoder", T=16, n_layers=12, n_heads=12, d_model=48, seed=1)
    view, sel = make(qtbot, first, size=(1200, 1000))
    img1 = view.grab().toImage()
    grid = view.grid
    assert grid.layers_heads == (12, 12)
    for trace in (second, first, second):  # repeated updates of all 144 tiles
        view.set_trace(trace)
        view.canvas.viewport().repaint()
    qtbot.waitUntil(lambda: view.stats is not None, timeout=20000)
    img2 = view.grab().toImage()
    assert img1 != img2
    assert view.grid is grid and grid.scene() is view.vb.scene()  # the item reused, not re-created
    p = second["L11.probs"][11]
    expected = np.floor(np.clip(p / view.thumbs.vmax * 254, 0, 254) + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(view.thumbs.images[11, 11], expected)
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/model_view_12x12.png")


def test_an_empty_grid_draws_no_colour_bar(qtbot):
    """Issue 36: a refused input cleared All heads but left its colour bar beside an empty grid. An empty view
    draws no scale; the next input's grid brings it back. Control: a drawn grid has its bar."""
    view, _ = make(qtbot, sample_trace("encoder", T=8))
    assert view.bar.isVisible() and view.marks[0].isVisible()
    view.set_trace(None, empty_reason="the input was refused: the text is empty")
    assert not view.bar.isVisible() and not any(m.isVisible() for m in view.marks)
    view.set_trace(sample_trace("encoder", T=8))
    assert view.bar.isVisible() and view.marks[0].isVisible()
