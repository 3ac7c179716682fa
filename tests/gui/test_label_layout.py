"""Scatter labels never overlap: greedy placement with leader lines, the selected label placed first."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import itertools  # noqa: E402

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.views import TokenEmbeddingView  # noqa: E402
from attnviz.gui.widgets.label_layout import boxes_overlap, place_labels  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def _cluster(n=60, seed=0):
    rng = np.random.default_rng(seed)
    dense = rng.normal(300, 12, (n - 10, 2))  # 50 points within ~40 px: every label would cover another
    spread = rng.uniform(40, 560, (10, 2))
    return np.vstack([dense, spread])


def test_dense_cluster_labels_do_not_intersect_and_clear_every_dot():
    pts = _cluster()
    sizes = np.column_stack([np.full(len(pts), 48.0), np.full(len(pts), 16.0)])
    ring = (pts[7, 0] - 9, pts[7, 1] - 9, pts[7, 0] + 9, pts[7, 1] + 9)
    placed = place_labels(pts, sizes, radius=4, bounds=(0, 0, 600, 600), first=7, reserved=[ring])
    boxes = [p.box for p in placed if p is not None]
    assert len(boxes) >= 25 and any(p.leader for p in placed if p is not None)
    for a, b in itertools.combinations(boxes, 2):
        assert not boxes_overlap(a, b), (a, b)
    sel = placed[7]
    for p in placed:
        if p is None:
            continue
        box = p.box
        assert 0 <= box[0] and 0 <= box[1] and box[2] <= 600 and box[3] <= 600
        for x, y in pts if p is not sel else []:  # no label hides a point (the selected one may: it stays put)
            assert not boxes_overlap(box, (x - 4, y - 4, x + 4, y + 4)), (box, x, y)
    assert sel is not None and not boxes_overlap(sel.box, ring)  # placed first: in the cluster, with a leader
    for p in placed:
        if p is not None and p is not sel:
            assert not boxes_overlap(p.box, ring)
    # a label left out is one that found no free place: the spread-out points all got theirs
    assert all(placed[i] is not None for i in range(len(pts) - 10, len(pts)))


def test_an_empty_plot_and_a_lone_point():
    assert place_labels(np.zeros((0, 2)), np.zeros((0, 2)), radius=4) == []
    (p,) = place_labels([[10, 10]], [[30, 12]], radius=4, bounds=(0, 0, 100, 100))
    assert p.left >= 10 + 4 and abs((p.top + p.height / 2) - 10) < 1e-9  # right of its dot, centred


def _label_boxes(view):
    """Scene rectangles of the labels on screen."""
    out = {}
    for i, item in enumerate(view.labels):
        if item.isVisible():
            r = item.textItem.mapRectToScene(item.textItem.boundingRect())
            out[i] = (r.left(), r.top(), r.right(), r.bottom())
    return out


def test_token_pca_view_labels_a_dense_cluster_without_overlaps(qtbot):
    trace = sample_trace("encoder", T=40)
    emb = np.asarray(trace["emb.token"], dtype=np.float64)
    rng = np.random.default_rng(1)
    # 34 tokens nearly on one spot, 6 far away: the crowded corner of a trained model's PCA
    emb[6:] = emb[6] + 1e-3 * rng.standard_normal(emb[6:].shape)
    trace.arrays["emb.token"] = emb.astype(np.float32)
    sel = Selection()
    view = TokenEmbeddingView(selection=sel, style=PRESETS["presentation"])
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    sel.update(query=20)  # a point inside the cluster
    QApplication.processEvents()
    view.grab()
    boxes = _label_boxes(view)
    for (i, a), (j, b) in itertools.combinations(boxes.items(), 2):
        assert not boxes_overlap(a, b), (view.labels[i].textItem.toPlainText(), view.labels[j].textItem.toPlainText())
    assert 20 in boxes and view.labels[20].textItem.font().bold()  # the selected label stays
    dot = view.plot.vb.mapViewToScene(_point(view.coords[20]))
    ring = view._ring_px() / 2
    assert not boxes_overlap(boxes[20], (dot.x() - ring, dot.y() - ring, dot.x() + ring, dot.y() + ring))
    hidden = len(view.labels) - len(boxes)
    assert hidden == view.hidden_labels
    if hidden:  # said on the figure, and hover still names each point
        assert f"{hidden} labels left out" in view.title_item.text
    assert view.point_text(30).startswith(str(trace.tokens[30]))


def _point(xy):
    from PySide6.QtCore import QPointF

    return QPointF(float(xy[0]), float(xy[1]))


def test_identical_points_of_one_token_get_one_label_with_their_count(qtbot):
    trace = sample_trace("encoder", T=12)
    emb = np.asarray(trace["emb.token"], dtype=np.float64)
    emb[[2, 5, 9]] = emb[2]  # the same token three times: one point
    trace.tokens[5] = trace.tokens[9] = trace.tokens[2]
    trace.arrays["emb.token"] = emb.astype(np.float32)
    sel = Selection()
    view = TokenEmbeddingView(selection=sel)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    sel.update(query=None)
    QApplication.processEvents()
    shown = [i for i in (2, 5, 9) if view.labels[i].isVisible()]
    assert shown == [2] and view.labels[2].textItem.toPlainText() == f"{trace.tokens[2]} ×3"
    assert view.hidden_labels == 0  # merged, not left out
    sel.update(query=9)  # the selected position names the group, in bold
    QApplication.processEvents()
    assert [i for i in (2, 5, 9) if view.labels[i].isVisible()] == [9] and view.labels[9].textItem.font().bold()
