"""A head map larger than the screen is drawn from its level-of-detail pyramid: the level fits the pixels,
each drawn cell is its block's maximum, full zoom shows exact values, hovers stay exact at any zoom."""

from __future__ import annotations

import math
import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QEvent, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import synthetic_trace  # noqa: E402
from attnviz.gui.views.head_map_view import HeadMapView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

T = 1500  # above the 1,024 tokens drawn whole


@pytest.fixture(scope="module")
def trace():
    return synthetic_trace(T, n_layers=1, n_heads=2, causal=True)


@pytest.fixture
def view(qtbot, trace):
    sel = Selection()
    v = HeadMapView(selection=sel)
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    v.set_trace(trace)
    qtbot.waitExposed(v)
    QApplication.processEvents()
    sel.update(head=1)
    return v


def reference_blocks(a: np.ndarray, f: int, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
    """Independent recomputation: pad the map to whole f×f blocks, reshape, take each block's maximum."""
    rows, cols = a.shape
    p = np.zeros((-(-rows // f) * f, -(-cols // f) * f), np.float64)
    p[:rows, :cols] = a
    blocks = p.reshape(p.shape[0] // f, f, p.shape[1] // f, f).max(axis=(1, 3))
    return blocks[r0 // f: -(-r1 // f), c0 // f: -(-c1 // f)]


def indices(values: np.ndarray, vmax: float) -> np.ndarray:
    return np.floor(np.clip(values / vmax * 254.0, 0, 254) + 0.5).astype(np.uint8)


def zoom(view, r0, r1, c0, c1) -> None:
    view.heatmap.vb.setRange(xRange=(c0, c1), yRange=(r0, r1), padding=0)


def test_the_level_is_the_finest_with_one_value_per_pixel(view):
    vb = view.heatmap.vb
    for size in ((900, 700), (500, 420)):
        view.resize(*size)
        QApplication.processEvents()
        per_px = max(T / vb.height(), T / vb.width())
        assert view.tile.level == math.ceil(math.log2(per_px)) > 0
        assert view.tile.image.shape[0] <= vb.height() + 1 and view.tile.image.shape[1] <= vb.width() + 1
    zoom(view, 100, 100 + vb.height() / 2, 300, 300 + vb.width() / 2)  # fewer cells than pixels: exact
    assert view.tile.level == 0


def test_each_drawn_cell_is_the_maximum_of_its_block(view, trace):
    a = trace["L0.probs"][1].astype(np.float64)
    masked = np.isneginf(trace["L0.mask"])
    for rng in ((0, T, 0, T), (200, 900, 50, 1300), (700.5, 760.2, 10.7, 90.1)):
        zoom(view, *rng)
        t = view.tile
        f = 1 << t.level
        expected = indices(reference_blocks(a, f, t.row0, t.row1, t.col0, t.col1), view.vmax)
        all_masked = reference_blocks(masked.astype(np.float64) * -1 + 1, f, t.row0, t.row1, t.col0, t.col1) == 0
        expected[all_masked] = 255
        np.testing.assert_array_equal(view.image_data, expected)
        # the crop covers the visible range, and the image sits on those data cells
        assert t.row0 <= max(rng[0], 0) and t.row1 >= min(rng[1], T) and t.col0 <= rng[2] and t.col1 >= rng[3]
        rect = view.heatmap.image.mapRectToParent(view.heatmap.image.boundingRect())
        assert (rect.top(), rect.bottom(), rect.left(), rect.right()) == pytest.approx((t.row0, t.row1, t.col0, t.col1))
        if f > 1:
            assert f"max of {f}×{f}" in view.heatmap.bar.label and f"max of {f}×{f}" in view.heatmap.title.text.replace("\u00a0", " ")
        else:
            assert "exact values" in view.heatmap.bar.label and "max of" not in view.heatmap.title.text


def test_per_map_scale_top_is_the_heads_exact_maximum(view, trace):
    view.scale_box.set_mode("per-map")
    view._draw_head()
    assert view.vmax == pytest.approx(float(trace["L0.probs"][1].max()))
    assert view.heatmap.bar.levels == (0.0, pytest.approx(float(trace["L0.probs"][1].max())))


@pytest.mark.parametrize("rng", [(0, T, 0, T), (1000, 1040, 20, 70)])
def test_hover_reads_the_trace_value_at_any_zoom(view, trace, qtbot, rng):
    zoom(view, *rng)
    view.grab()
    row, col = (rng[0] + rng[1]) // 2 + 3, rng[2] + 7
    pos = view.widget_pos(view.heatmap.vb, col + 0.5, row + 0.5)
    ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(view.canvas.viewport().mapToGlobal(pos)),
                     Qt.NoButton, Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(view.canvas.viewport(), ev)
    qtbot.waitUntil(lambda: "→" in view.hover_text, timeout=3000)
    # zoomed out a cell is under a pixel wide: the cell under the mouse is one of the neighbours
    m = re.fullmatch(r"(\S+) \[(\d+)\] → (\S+) \[(\d+)\]: (.+)", view.hover_text)
    r, c = int(m[2]), int(m[4])
    assert abs(r - row) <= 2 and abs(c - col) <= 2
    assert (m[1], m[3]) == (trace.tokens[r], trace.tokens[c])  # both tokens named
    value = float(trace["L0.probs"][1, r, c])  # the full-resolution value, not the block's maximum
    assert m[5] == (f"{value:.6f}" if value == 0 or value >= 1e-4 else f"{value:.3e}")


def test_a_head_switch_keeps_the_zoom(view, trace):
    zoom(view, 300, 400, 300, 400)
    view.selection.update(head=0)
    t = view.tile
    assert t.level == 0 and t.row0 <= 300 and t.row1 >= 400
    a = trace["L0.probs"][0][t.row0:t.row1, t.col0:t.col1].astype(np.float64)
    expected = indices(a, view.vmax)
    expected[np.isneginf(trace["L0.mask"])[t.row0:t.row1, t.col0:t.col1]] = 255
    np.testing.assert_array_equal(view.image_data, expected)


def test_a_layer_switch_draws_the_new_layers_blocks(qtbot):
    trace = synthetic_trace(1100, n_layers=2, n_heads=1, causal=True, seed=3)
    sel = Selection()
    view = HeadMapView(selection=sel)
    qtbot.addWidget(view)
    view.resize(600, 500)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    QApplication.processEvents()
    first = view._pyramids
    sel.update(layer=1)
    assert view._pyramids.visible is first.visible  # one mask for every layer: pooled once
    t = view.tile
    f = 1 << t.level
    assert f > 1
    expected = indices(reference_blocks(trace["L1.probs"][0].astype(np.float64), f, t.row0, t.row1, t.col0, t.col1),
                       view.vmax)
    masked = np.isneginf(trace["L1.mask"]).astype(np.float64)
    expected[reference_blocks(1 - masked, f, t.row0, t.row1, t.col0, t.col1) == 0] = 255
    np.testing.assert_array_equal(view.image_data, expected)


def test_a_long_maps_axes_name_positions(view, trace):
    """Every n-th token is drawn on a long map's axes: each label says which position it is ("1,234 tok");
    a short map's labels are the tokens alone (the control)."""
    left = view.heatmap.left.labels
    assert len(left) == T and left[0].startswith("0 ") and left[1234].startswith("1,234 ")
    from attnviz.text.token_display import display_token

    assert left[1234] == f"1,234 {display_token(trace.tokens[1234])}"
    short = HeadMapView(selection=Selection())
    short.set_trace(synthetic_trace(12, n_layers=1, n_heads=2, causal=True))
    assert not any(lab[:1].isdigit() and " " in lab for lab in short.heatmap.left.labels)
    short.deleteLater()
