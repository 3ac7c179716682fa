"""RolloutView: the three maps equal an independent numpy recomputation; controls are debounced."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
import pytest  # noqa: E402

from attnviz.gui.views.rollout_view import RolloutView  # noqa: E402
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def make(qtbot, trace):
    sel = Selection()
    view = RolloutView(selection=sel)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    return view, sel


def rollout_numpy(trace, residual=0.5, start=0):
    """Abnar & Zuidema with mean fusion, written out independently."""
    T = len(trace.tokens)
    R = np.eye(T)
    for i in range(start, trace.n_layers):
        A = trace[f"L{i}.probs"].astype(np.float64).mean(0)
        A = (1 - residual) * A + residual * np.eye(T)
        A /= A.sum(-1, keepdims=True)
        R = A @ R
    return R


def shares(row, drop_cls):
    row = row[1:] if drop_cls else row
    return row / row.sum()


def indices(values, top):
    return np.floor(np.clip(np.asarray(values) / top * 254, 0, 254) + 0.5).astype(np.uint8)


def test_image_maps_share_one_scale_by_default_and_the_plain_input(qtbot):
    trace = sample_trace("vit", n_layers=3, grad=True)
    view, sel = make(qtbot, trace)
    maps = view.maps.maps
    raw = shares(trace["L2.probs"].astype(np.float64).mean(0)[0], True)
    np.testing.assert_allclose(maps["raw"], raw, rtol=1e-6)
    np.testing.assert_allclose(maps["rollout"], shares(rollout_numpy(trace)[0], True), rtol=1e-6)
    assert maps["grad"] is not None and maps["grad"].shape == (16,)
    # one shared scale by default (maps side by side are compared): every bar runs 0..the largest share
    vmax = max(float(m.max()) for m in maps.values())
    assert view.scale_box.mode == "shared"
    assert all(b.levels == (0.0, pytest.approx(vmax)) for b in view.bars.values())
    # per map on request: each bar runs 0..its own map's maximum, and the brightest patch of each is the top colour
    view.scale_box.set_mode("per-map")
    for name in ("raw", "rollout", "grad"):
        top = float(maps[name].max())
        assert view.bars[name].levels == (0.0, pytest.approx(top))
        assert "own scale" in view.bars[name].label
        heat = view.panels[name][3].image
        np.testing.assert_array_equal(heat, indices(maps[name].reshape(4, 4), top))
        assert heat.max() == 254
    # the plain input is shown too, in its own panel, without any overlay
    picture = view.input_panel[2].image
    np.testing.assert_array_equal(picture, (np.clip(trace["image"], 0, 1) * 255).round().astype(np.uint8))
    # shared: every bar and map on the largest share of all three
    view.scale_box.set_mode("shared")
    vmax = max(float(m.max()) for m in maps.values())
    assert all(b.levels == (0.0, pytest.approx(vmax)) for b in view.bars.values())
    np.testing.assert_array_equal(view.panels["rollout"][3].image, indices(maps["rollout"].reshape(4, 4), vmax))
    view.scale_box.set_mode("fixed")
    assert all(b.levels == (0.0, 1.0) for b in view.bars.values())
    view.scale_box.set_mode("per-map")
    # the three images are the same size, right under their captions (not centred in a tall dock)
    ranges = [[*vb.viewRange()[0], *vb.viewRange()[1]] for _, vb, _, _ in view.panels.values()]
    assert all(r == pytest.approx(ranges[0]) for r in ranges) and ranges[0][2] == pytest.approx(0.0)
    view.opacity.setValue(30)
    assert view.panels["raw"][3].opacity() == pytest.approx(0.3)
    assert "patch 1,2" in view.patch_text("raw", 1, 2)
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/rollout_vit.png")


def test_controls_recompute_after_debounce(qtbot):
    trace = sample_trace("vit", n_layers=3)
    view, sel = make(qtbot, trace)
    before = view.maps.maps["rollout"].copy()
    view.residual.setValue(20)
    view.start_layer.setValue(1)
    np.testing.assert_array_equal(view.maps.maps["rollout"], before)  # not yet: debounced
    qtbot.waitUntil(lambda: not np.array_equal(view.maps.maps["rollout"], before), timeout=3000)
    np.testing.assert_allclose(view.maps.maps["rollout"], shares(rollout_numpy(trace, 0.2, 1)[0], True), rtol=1e-6)
    assert view.maps.maps["grad"] is None and "attnviz trace --grad" in view.maps.notes["grad"]


def test_text_strips_follow_the_selected_query(qtbot):
    trace = sample_trace("encoder", T=9, grad=True)
    view, sel = make(qtbot, trace)
    assert view._body is view.text_body
    strip = view.strips["rollout"]
    assert strip.tokens == trace.tokens and strip.marked == 0  # CLS by default
    sel.update(query=4)
    np.testing.assert_allclose(view.strips["rollout"].values, shares(rollout_numpy(trace)[4], False), rtol=1e-6)
    assert view.strips["rollout"].marked == 4
    R = np.eye(9)
    for i in range(trace.n_layers):  # Chefer et al.: R += mean_h (grad ⊙ A)+ · R
        cam = np.clip(trace[f"L{i}.grad"].astype(np.float64) * trace[f"L{i}.probs"], 0, None).mean(0)
        R = R + cam @ R
    np.testing.assert_allclose(view.strips["grad"].values, shares((R - np.eye(9))[4], False), rtol=1e-6)
    box = strip._boxes[6].center()
    from PySide6.QtCore import Qt
    view.grab()
    qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=view.widget_pos(strip, box.x(), box.y()))
    assert sel.query == 6
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/rollout_text.png")


def test_controls_wrap_in_a_narrow_dock(qtbot):
    view, _ = make(qtbot, sample_trace("vit"))
    assert view.minimumSizeHint().width() < 420  # one row of all controls needs ~700 px
    view.resize(380, 700)
    qtbot.wait(50)
    tops = {w.geometry().top() for w in (view.fusion.parentWidget(), view.opacity.parentWidget())}
    assert len(tops) == 2  # the overlay control went to a later line
    for w in (view.fusion, view.discard, view.residual, view.start_layer, view.opacity):
        assert w.isVisible() and w.width() > 0
    view.resize(1200, 800)
    qtbot.wait(50)
    assert view.fusion.parentWidget().geometry().top() == view.opacity.parentWidget().geometry().top()


def _picture_rect(vb, picture):
    """Where a panel's picture is drawn, in the figure's scene coordinates."""
    return vb.mapViewToScene(picture.mapRectToParent(picture.boundingRect())).boundingRect()


def test_image_panels_stay_together_on_a_wide_slide(qtbot):
    """On a 16:9 figure the three maps are as tall as their rows allow, all the same size, the input larger beside
    them, and grouped in the middle (equal half-width cells once left a third of the width empty between the
    columns)."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    trace = sample_trace("vit", n_layers=3, grad=True)
    view, _ = make(qtbot, trace)
    img = QImage(1920, 1080, QImage.Format.Format_ARGB32)
    painter = QPainter(img)
    try:
        geometry = []
        scale = 1.32
        src = QRectF(0, 0, 1920 / scale, 1080 / scale)
        orig = view._relayout

        def record(geom):  # the figure's layout while it is painted at slide size
            orig(geom)
            if geom == src:
                panels = [view.input_panel[1:]] + [p[1:3] for p in view.panels.values()]
                geometry.append(([_picture_rect(vb, pic) for vb, pic in panels],
                                 view.image_body.mapRectToScene(view.image_body.boundingRect())))

        view._relayout = record
        view.render_figure(painter, QRectF(0, 0, 1920, 1080), scale)
    finally:
        painter.end()
    (rects, grid), = geometry
    sizes = {(round(r.width()), round(r.height())) for r in rects[1:]}
    assert len(sizes) == 1, sizes  # one size for the three maps
    assert view.image_body.arrangement == "beside"  # (on a slide the input stands large beside them)
    assert rects[0].height() > 1.5 * rects[1].height(), (rects[0], rects[1])
    row_h = (grid.height()) / 2
    assert rects[1].height() > 0.7 * row_h  # as tall as the row allows, less its caption
    left, right = min(r.left() for r in rects), max(r.right() for r in rects)
    apart_px = rects[1].left() - rects[0].right()  # empty pixels between the input and raw attention
    assert apart_px < 0.2 * grid.width(), (apart_px, grid.width())
    # centred: the empty bands left and right of the block differ by less than a bar's width
    assert abs((left - grid.left()) - (grid.right() - right)) < 0.12 * grid.width()


def test_the_input_caption_says_the_grid_and_the_patch_size_apart():
    """Issue 36, finding 12: "4×4 patches" read as 4-pixel patches."""
    from types import SimpleNamespace

    from attnviz.gui.views.rollout_panels import patch_caption

    from attnviz.capture.description import TraceDescription

    t = SimpleNamespace(grid=(4, 4), description=TraceDescription(config={"patch_size": 8}))
    assert patch_caption(t, (32, 32)) == "32 × 32 pixels<br>a 4 × 4 grid of patches, each 8 × 8 pixels"
    t = SimpleNamespace(grid=(7, 7), description=TraceDescription())  # no config: the image side over the grid
    assert patch_caption(t, (224, 224)) == "224 × 224 pixels<br>a 7 × 7 grid of patches, each 32 × 32 pixels"


def test_the_title_states_the_models_own_rollout_versus_raw(qtbot):
    """The shapes classifier stored its held-out pointing game: the figure says rollout and raw attention tie
    (or which leads) with the numbers; a model that measured nothing gets no such line (control)."""
    import attnviz
    from attnviz.analysis.share_versus import rollout_verdict

    trace = attnviz.load("shapes").trace(image=np.random.default_rng(0).random((32, 32, 3), np.float32)).trace
    want = rollout_verdict(trace.meta["metrics"])
    assert want is not None and trace.meta["metrics"]["offcentre_n"] >= 1000
    view, _ = make(qtbot, trace)
    qtbot.waitUntil(lambda: "get its information" in view.title_item.text, timeout=10000)
    assert want in view.title_item.text.replace("&nbsp;", " ")
    digits = attnviz.load("digits").trace(image=np.zeros((8, 8), np.float32)).trace
    assert rollout_verdict(digits.meta["metrics"]) is None
    view2, _ = make(qtbot, digits)
    qtbot.waitUntil(lambda: "get its information" in view2.title_item.text, timeout=10000)
    assert "held out" not in view2.title_item.text


def test_a_strips_message_wraps_inside_the_strip(qtbot):
    """A text model without gradients (charlm in the app): the gradient strip's note is wrapped inside the
    strip, left of the colour bar (on one line it ran under the bar's ticks, issue 36); the control: the
    note on one line is wider than the strip."""
    from PySide6.QtGui import QFontMetricsF

    trace = sample_trace("decoder", T=12)
    view, sel = make(qtbot, trace)
    view.resize(620, 700)
    qtbot.waitUntil(lambda: bool(view.strips["grad"].message), timeout=5000)
    for _ in range(5):
        QApplication.processEvents()
    strip = view.strips["grad"]
    width = strip.size().width()
    fm = QFontMetricsF(strip._font)
    assert strip._label_w() + fm.horizontalAdvance(strip.message) > width  # control: one line does not fit
    rect = strip.message_rect(width)
    assert rect.right() <= width + 0.5, f"the note ends at {rect.right():.0f} px of a {width:.0f} px strip"
    assert strip.size().height() >= rect.height(), "the strip is shorter than its wrapped note"
    bar = view.bar.mapRectToScene(view.bar.boundingRect())
    assert strip.mapRectToScene(rect).right() <= bar.left() + 0.5, "the note runs under the colour bar"


def test_the_image_title_says_what_was_trained_and_what_it_says():
    """Issue 36 item 10: the slide asked "Where does [CLS] get its information?" without the model or its answer."""
    from attnviz.capture.description import TraceDescription
    from attnviz.gui.views.rollout_panels import predicted_label, trained_line

    class T(dict):  # a trace: its arrays by name, and a description
        pass

    t = T(prediction=np.array([0.1, 0.2, 0.05, 0.05, 0.6]))
    t.description = TraceDescription(n_layers=3, labels=["circle", "square", "triangle", "cross", "star"])
    assert trained_line(t) == ("3-layer vision transformer trained on 5 classes (circle, square, triangle, cross, "
                               "star), classifying from [CLS]: it says star")
    assert predicted_label(t) == "star"
    t.description = TraceDescription(n_layers=3, labels=[str(d) for d in range(10)])
    assert "10 classes (0–9)" in trained_line(t)
    t.description = TraceDescription(n_layers=3)  # control: no labels, no line
    assert trained_line(t) is None and predicted_label(t) is None
