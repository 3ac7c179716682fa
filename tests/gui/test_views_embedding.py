"""The embedding views (ViT paper figures and text): each checked against a numpy recomputation."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
import pytest  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.views.filter_pca_view import NOISE_GREY  # noqa: E402
from attnviz.gui.views import (AttentionDistanceView, FilterPCAView, PositionalEncodingView,  # noqa: E402
                               PositionSimilarityView, TokenEmbeddingView)
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def make(qtbot, cls, trace, style=None):
    sel = Selection()
    view = cls(selection=sel, style=style)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    return view, sel


def shot(view, name):
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/{name}.png")


def cosine(a):
    a = a.astype(np.float64)
    n = np.linalg.norm(a, axis=1, keepdims=True)
    u = a / np.where(n > 0, n, 1)
    return u @ u.T


def test_filter_pca_from_a_weight(qtbot):
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((40, 3, 4, 4))
    trace = sample_trace("vit")
    assert trace["emb.patch_weight"].shape == (16, 3, 2, 2)  # capture records the filters (D, C, P, P)
    del trace.arrays["emb.patch_weight"]  # an older trace without them
    view, _ = make(qtbot, FilterPCAView, trace)
    assert view.components is None and "filters" in view.title_item.text  # not in the trace: says so
    view.set_filters(weight)
    flat = weight.reshape(40, -1)
    s = np.linalg.svd(flat - flat.mean(0), compute_uv=False)
    np.testing.assert_allclose(view.ratio, (s ** 2 / (s ** 2).sum())[:28], rtol=1e-8)
    assert view.components.shape == (28, 4, 4, 3)
    # white-noise filters: no component beats a random split of the variance, every one is marked noise
    grey = [c.textItem.defaultTextColor().name() == NOISE_GREY for c in view.captions]
    assert len(view.captions) == 28 and view.captions[0].textItem.toPlainText() == f"PC1\n{view.ratio[0]:.1%}"
    assert all(grey) and "Grey: PC1–28" in view.note_item.text
    # two strong directions plus a little noise: PC1 and PC2 are structure, the rest noise
    basis = rng.standard_normal((2, 48))
    structured = (rng.standard_normal((40, 2)) * [5.0, 3.0]) @ basis + 0.01 * rng.standard_normal((40, 48))
    view.set_filters(structured.reshape(40, 3, 4, 4))
    grey = [c.textItem.defaultTextColor().name() == NOISE_GREY for c in view.captions]
    assert grey[:3] == [False, False, True] and all(grey[2:])
    assert "Grey: PC3–28" in view.note_item.text
    shot(view, "filter_pca")


def test_filter_tiles_stay_legible_in_a_narrow_dock(qtbot):
    """Issue 36: at 1280×720 the dock is ~270 px wide; seven tiles a row drew 30-px tiles under captions that ran
    into each other. Fewer a row, each at least as wide as its caption, the figure scrolling."""
    from PySide6.QtGui import QFontMetricsF

    trace = sample_trace("vit")
    view, _ = make(qtbot, FilterPCAView, trace)
    view.set_filters(np.random.default_rng(1).standard_normal((64, 1, 4, 4)))
    view.resize(270, 470)
    for _ in range(10):
        QApplication.processEvents()
    caption_px = QFontMetricsF(view.style.font(1.0)).horizontalAdvance(view.captions[0].textItem.toPlainText()
                                                                          .split("\n")[1])
    tile = view.canvas.mapFromScene(view.vb.mapViewToScene(QRectF(0, 0, 4, 4))).boundingRect()
    assert view.cols < 7 and tile.width() >= max(caption_px, 40), (view.cols, tile.width(), caption_px)
    assert view.scroll.verticalScrollBar().maximum() > 0  # the rows scroll rather than shrink
    pitch = view.canvas.mapFromScene(view.vb.mapViewToScene(QRectF(0, 0, 5, 1))).boundingRect().width()  # P + gap
    assert pitch * view.cols <= view.scroll.viewport().width()  # no tile cut at the right
    # control: a wide dock gets the paper's seven a row, no scrolling
    view.resize(1100, 800)
    for _ in range(10):
        QApplication.processEvents()
    assert view.cols == 7 and view.scroll.verticalScrollBar().maximum() == 0


def test_position_similarity_text_and_vit(qtbot):
    enc = sample_trace("encoder", T=8)
    view, _ = make(qtbot, PositionSimilarityView, enc)
    np.testing.assert_allclose(view.similarity, cosine(enc["emb.pos"]), atol=1e-6)
    assert view.heatmap.bar.levels == (-1.0, 1.0)
    assert f"{view.similarity[2, 5]:.6f}" in view.cell_text(2, 5)
    vit = sample_trace("vit")
    view.set_trace(vit)
    sim = cosine(vit["emb.pos"][1:])  # the CLS row has no place on the grid
    assert view.similarity.shape == (4, 4, 4, 4)
    np.testing.assert_allclose(view.similarity[1, 2], sim[1 * 4 + 2].reshape(4, 4), atol=1e-6)
    mosaic = view.mosaic()
    assert mosaic.shape == (19, 19) and np.isnan(mosaic[4]).all()  # separators between the maps
    assert "patch 1,2 vs patch 3,0" in view.cell_text(1 * 5 + 3, 2 * 5 + 0)
    shot(view, "position_similarity_vit")


def test_attention_distance_points(qtbot):
    vit = sample_trace("vit", n_layers=3)
    view, sel = make(qtbot, AttentionDistanceView, vit)
    qtbot.waitUntil(lambda: view.stats is not None, timeout=20000)
    # independent: patch-centre distances in pixels, CLS query and key dropped, rows renormalised
    rc = np.array([(r, c) for r in range(4) for c in range(4)], dtype=np.float64) * 2  # patch size 2
    dist = np.linalg.norm(rc[:, None] - rc[None, :], axis=-1)
    for layer in range(3):
        w = vit[f"L{layer}.probs"].astype(np.float64)[:, 1:, 1:]
        w = w / w.sum(-1, keepdims=True)
        np.testing.assert_allclose(view.stats.distance[layer], (w * dist).sum(-1).mean(-1), rtol=1e-6)
    pts = view.points()
    assert pts.shape == (12, 4)
    np.testing.assert_allclose(pts[:, 1], view.stats.distance.ravel())
    sel.update(layer=2, head=1)
    assert "layer 2 · head 1" in view.point_text(2, 1)
    view.set_style(PRESETS["presentation"])
    shot(view, "attention_distance")


def test_token_embedding_pca(qtbot):
    enc = sample_trace("encoder", T=10)
    view, sel = make(qtbot, TokenEmbeddingView, enc)
    x = enc["emb.token"].astype(np.float64)
    x = x - x.mean(0)
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    expected = x @ vt[:2].T
    np.testing.assert_allclose(np.abs(view.coords), np.abs(expected), atol=1e-6)  # signs are arbitrary
    assert [item.textItem.toPlainText() for item in view.labels] == enc.tokens
    sel.update(query=3)
    assert view.marker.data["x"][0] == pytest.approx(view.coords[3, 0])
    view.source.setCurrentIndex(2)  # token + position
    assert view.key == "emb.sum" and view.coords.shape == (10, 2)
    shot(view, "token_embedding")


def test_the_vectors_box_names_what_the_model_reads_and_offers_only_what_it_has(qtbot):
    """A vision model's vectors are patch embeddings (the box said "token embedding" over a "Patch embedding"
    title); a model without position vectors is not offered them. The control: a text model's box as before."""
    vit = sample_trace("vit")
    view, _ = make(qtbot, TokenEmbeddingView, vit)
    names = [view.source.itemText(i) for i in range(view.source.count())]
    assert names == ["patch embedding", "position encoding", "patch + position"], names
    assert view.key == "emb.token" and view.title_item.text.startswith("Patch embedding")
    view.source.setCurrentIndex(2)
    no_pos = sample_trace("decoder", T=6)
    for key in ("emb.pos", "emb.sum"):
        no_pos.arrays.pop(key, None)  # as a rotary (Llama-family) model records: no position vectors
    view.set_trace(no_pos)
    names = [view.source.itemText(i) for i in range(view.source.count())]
    assert names == ["token embedding"] and view.key == "emb.token" and view.coords is not None, names
    view.set_trace(sample_trace("decoder", T=6))
    assert [view.source.itemText(i) for i in range(view.source.count())] == list(
        ["token embedding", "position encoding", "token + position"])


def test_positional_encoding_heatmap_shows_every_position_the_model_holds(qtbot):
    enc = sample_trace("encoder", T=9, pos="sinusoidal")
    view, sel = make(qtbot, PositionalEncodingView, enc, style=PRESETS["dark"])
    pos = enc["emb.pos_table"].astype(np.float64)  # (max_len, D): more rows than the input's 9
    n, D = pos.shape
    assert n > 9 and view.heatmap.image.shape_rc == (n, D)
    np.testing.assert_array_equal(enc["emb.pos"], pos[:9])  # the input uses the first rows
    m = np.abs(pos).max()
    np.testing.assert_allclose(view.heatmap.bar.levels, (-m, m), rtol=1e-6)
    expected = np.floor(np.clip((pos + m) / (2 * m) * 254, 0, 254) + 0.5).astype(np.uint8)
    assert np.abs(view.heatmap.indices.astype(int) - expected).max() <= 1  # float32 rounding at .5
    title = view.heatmap.title.text
    assert title.startswith("Sinusoidal") and f"{n} positions × {D} dimensions" in title and "0–8 outlined" in title
    assert all(item.isVisible() and item.rect().height() == 9 for item in view.input_marks)
    assert f"{pos[4, 7]:.6f}" in view.cell_text(4, 7) and "not used" in view.cell_text(n - 1, 0)
    assert view.heatmap.left.labels[n - 1] == str(n - 1) and view.heatmap.left.labels[2].startswith("2 ")
    sel.update(query=2)
    assert view.heatmap.left.selected == 2
    shot(view, "positional_encoding_dark")


def test_positional_encoding_of_an_old_trace_shows_the_input_rows(qtbot):
    enc = sample_trace("encoder", T=9, pos="sinusoidal")
    del enc.arrays["emb.pos_table"]  # a trace written before the whole table was recorded
    view, _ = make(qtbot, PositionalEncodingView, enc)
    assert view.heatmap.image.shape_rc == enc["emb.pos"].shape
    assert not any(item.isVisible() for item in view.input_marks) and "the input's 9 positions" in view.heatmap.title.text
