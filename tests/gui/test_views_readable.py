"""What the views hold equals the data: axis ranges, every token label, colour-bar levels per scale mode,
diverging maps symmetric around 0 (issue 13: views you can trust, readable from the back row)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.style import PRESETS, ViewStyle, colour_lut  # noqa: E402
from attnviz.gui.views import (HeadMapView, PositionalEncodingView, PositionSimilarityView,  # noqa: E402
                               TokenEmbeddingView)
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def make(qtbot, cls, trace, style=None, size=(1200, 800), state=None):
    sel = Selection()
    if state:
        sel.update(**state)
    view = cls(selection=sel, style=style)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    for _ in range(3):  # the axes settle on the laid-out size
        QApplication.processEvents()
    return view, sel


def indices(values, top, bottom=0.0):
    return np.floor(np.clip((np.asarray(values, np.float64) - bottom) / (top - bottom) * 254, 0, 254)
                    + 0.5).astype(np.uint8)


@pytest.mark.parametrize("preset", ["default", "presentation"])
@pytest.mark.parametrize("T", [27, 64])
def test_every_token_label_is_drawn_up_to_64_tokens_full_screen(qtbot, preset, T):
    view, _ = make(qtbot, HeadMapView, sample_trace("encoder", T=T), PRESETS[preset], size=(1920, 1080))
    for axis in (view.heatmap.left, view.heatmap.bottom):
        assert axis.visible_indices() == list(range(T)), (axis.orientation, axis.stride, axis.font_factor)
        # the labels drawn fit their pitch: no two overlap
        pitch = axis._px_per_unit()
        assert axis._metrics().height() * axis.LINE <= pitch or (axis.orientation != "left" and not axis.rotated)
    assert view.heatmap.bottom.labels == [str(t) for t in view.res.key_tokens]


def test_crowded_labels_shrink_before_they_thin_and_thin_only_at_the_smallest_size(qtbot):
    # presenting, labels shrink no further than 12 px (9 pt): 40 of them need a map about 600 px tall
    view, _ = make(qtbot, HeadMapView, sample_trace("encoder", T=40), PRESETS["presentation"], size=(1100, 900))
    left = view.heatmap.left
    assert left.font_factor < 1.0 and left.stride == 1  # smaller type, every label
    view.resize(500, 380)
    for _ in range(3):
        QApplication.processEvents()
    if left.stride > 1:  # thinned only once the font is as small as it may be
        assert left.font_factor == pytest.approx(left._min_factor())


@pytest.mark.parametrize("mode", ["fixed", "per-map", "shared"])
def test_head_map_colour_bar_levels_for_each_scale_mode(qtbot, mode):
    trace = sample_trace("encoder", T=10, n_layers=3, n_heads=4)
    view, sel = make(qtbot, HeadMapView, trace, ViewStyle(scale=mode), state={"layer": 1, "head": 2})
    head = trace["L1.probs"][2].astype(np.float64)
    top = {"fixed": 1.0, "per-map": head.max(),
           "shared": max(float(trace[f"L{i}.probs"].max()) for i in range(3))}[mode]
    assert view.scale_box.mode == mode
    assert view.heatmap.bar.levels == (0.0, pytest.approx(top))
    np.testing.assert_array_equal(view.image_data, indices(head, top))
    words = {"fixed": "fixed scale 0–1", "per-map": "this head's maximum", "shared": "all layers and heads"}[mode]
    assert words in view.heatmap.bar.label
    # a user's pick in the view survives a theme change, which carries no scale of its own
    view.scale_box.set_mode("per-map")
    view.set_style(PRESETS["dark"])
    assert view.scale_box.mode == "per-map" and view.heatmap.bar.levels == (0.0, pytest.approx(head.max()))


def test_attention_defaults_to_fixed_zero_to_one(qtbot):
    # a near-uniform head must not look as bright as a peaked one: the default top is 1, not the map's max
    trace = sample_trace("encoder", T=10)
    view, _ = make(qtbot, HeadMapView, trace)
    assert view.scale_box.mode == "fixed" and view.heatmap.bar.levels == (0.0, 1.0)
    np.testing.assert_array_equal(view.image_data, indices(trace["L0.probs"][0], 1.0))


def test_position_similarity_is_diverging_and_symmetric_around_zero(qtbot):
    trace = sample_trace("encoder", T=12)
    view, _ = make(qtbot, PositionSimilarityView, trace)
    lo, hi = view.heatmap.bar.levels
    assert (lo, hi) == (-1.0, 1.0)
    assert view.heatmap.diverging and view.heatmap.bar.diverging
    sim = view.similarity
    np.testing.assert_array_equal(view.heatmap.indices, indices(sim, 1.0, -1.0))
    lut = colour_lut(view.style, diverging=True)
    np.testing.assert_array_equal(view.heatmap.image.lut, lut)
    # 0 is the middle of the map, which is light (near white) and lighter than both ends
    light = lut[:, :3].astype(float) @ [0.299, 0.587, 0.114]
    assert indices(0.0, 1.0, -1.0) == 127 and light[127] > 200 and light[127] > max(light[0], light[254]) + 80


def test_positional_encoding_is_diverging_with_symmetric_levels(qtbot):
    trace = sample_trace("encoder", T=12)
    view, _ = make(qtbot, PositionalEncodingView, trace)
    pos = trace["emb.pos_table"].astype(np.float64)
    m = np.abs(pos).max()
    assert view.heatmap.bar.levels == (pytest.approx(-m), pytest.approx(m)) and view.heatmap.diverging


def test_pca_axes_equal_the_data_after_a_restyle(qtbot):
    trace = sample_trace("encoder", T=12)
    trace.arrays["emb.token"] = trace["emb.token"] * 0.02  # a trained model's ±0.15, where SI prefixes start
    view, _ = make(qtbot, TokenEmbeddingView, trace)
    assert np.abs(view.coords).max() < 1
    view.set_style(PRESETS["presentation"])  # restyling with data on screen set a stuck ×1000 factor
    view.set_style(PRESETS["default"])
    view.plot.autoRange()
    QApplication.processEvents()
    for name, col in (("bottom", 0), ("left", 1)):
        ax = view.plot.getAxis(name)
        lo, hi = ax.range
        data = view.coords[:, col]
        assert lo <= data.min() and data.max() <= hi and (hi - lo) < 3 * (data.max() - data.min()) + 1e-9
        # the tick texts are the tick values (no hidden SI factor)
        assert ax.autoSIPrefixScale == 1.0
        for spacing, values in ax.tickValues(lo, hi, 500):
            texts = ax.tickStrings(values, ax.autoSIPrefixScale * ax.scale, spacing)
            for v, t in zip(values, texts):
                assert float(t.replace("−", "-")) == pytest.approx(v, abs=spacing / 2)


def test_pca_selected_label_clears_the_ring(qtbot):
    trace = sample_trace("encoder", T=12)
    view, sel = make(qtbot, TokenEmbeddingView, trace)
    sel.update(query=3)
    QApplication.processEvents()
    label = view.labels[3]
    dot = view.plot.vb.mapViewToScene(pg_point(view.coords[3]))
    view.grab()  # TextItem places its text (anchor) when painted
    text_left = label.textItem.mapToScene(label.textItem.boundingRect().topLeft()).x()
    assert text_left - dot.x() >= view._ring_px() / 2  # the text starts right of the ring
    assert label.textItem.font().bold()


def pg_point(xy):
    from PySide6.QtCore import QPointF

    return QPointF(float(xy[0]), float(xy[1]))


def test_single_channel_filter_components_are_diverging_around_zero():
    from attnviz.gui.views.filter_pca_view import component_tiles

    comp = np.array([[[[-2.0], [0.0]], [[1.0], [2.0]]]])  # (1, 2, 2, 1), signed
    lut = colour_lut(ViewStyle(), diverging=True)
    tiles = component_tiles(comp, lut)
    np.testing.assert_array_equal(tiles[0, 0, 1], lut[127])  # 0 → the middle colour
    np.testing.assert_array_equal(tiles[0, 0, 0], lut[0])  # −m → one end
    np.testing.assert_array_equal(tiles[0, 1, 1], lut[254])  # +m → the other
    np.testing.assert_array_equal(tiles[0, 1, 0], lut[indices(0.5, 1.0, -1.0)])


def test_patch_labels_thin_to_the_grid_rows_at_full_size(qtbot):
    from attnviz.capture import Trace
    from attnviz.bench.traces import synthetic_trace

    base = synthetic_trace(T=65, n_layers=1, n_heads=2, causal=False)  # CLS and 8×8 patches
    tokens = ["[CLS]"] + [f"{r},{c}" for r in range(8) for c in range(8)]
    trace = Trace(tokens=tokens, meta={**base.meta, "kind": "vit", "grid": [8, 8]}, arrays=base.arrays)
    view, _ = make(qtbot, HeadMapView, trace, PRESETS["presentation"], size=(1000, 700))
    left = view.heatmap.left
    shown = left.visible_indices()
    assert left.major_only and left.font_factor == 1.0
    assert shown == [0] + [1 + 8 * r for r in range(1, 8)]  # CLS, then "r,0" of every grid row (0,0 is CLS's neighbour)
    assert [left.labels[i] for i in shown[1:]] == [f"{r},0" for r in range(1, 8)]
    view.resize(1900, 2000)  # room for every label: every label
    for _ in range(3):
        QApplication.processEvents()
    assert left.visible_indices() == list(range(65)) and not left.major_only


def test_every_plot_axis_reads_the_data_unscaled(qtbot):
    # both scatter views use axes that never apply an SI factor, whatever the range or restyle
    from attnviz.gui.views import AttentionDistanceView
    from attnviz.gui.widgets.plot_style import PlainAxisItem

    for cls in (AttentionDistanceView, TokenEmbeddingView):
        view, _ = make(qtbot, cls, sample_trace("encoder", T=8))
        view.set_style(PRESETS["presentation"])
        for name in ("left", "bottom"):
            ax = view.plot.getAxis(name)
            assert isinstance(ax, PlainAxisItem)
            ax.setRange(-0.00015, 0.00015)  # where pyqtgraph would switch to µ and multiply by 1e6
            ax.updateAutoSIPrefix()
            assert ax.autoSIPrefixScale == 1.0 and ax.labelUnitPrefix == ""


def test_position_similarity_of_a_model_without_positions_is_not_drawn_as_zero(qtbot):
    trace = sample_trace("encoder", T=10)
    view, _ = make(qtbot, PositionSimilarityView, trace)
    assert view.heatmap.bar.isVisible() and view.similarity is not None
    trace.arrays["emb.pos"] = np.zeros_like(trace["emb.pos"])  # the order-sentiment-nopos model
    view.set_trace(trace)
    # cosine similarity of zero vectors is undefined: no map, no 0-coloured square, no stale labels
    assert view.similarity is None and view.heatmap.image.image is None
    assert not view.heatmap.bar.isVisible() and "no position encoding" in view.heatmap.title.text
    assert view.heatmap.left.labels == []
