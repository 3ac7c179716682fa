"""HeadMapView: the image is the trace's head, labels are the tokens, hovers exact, clicks select."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, QSize, Qt  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402

from attnviz.gui.style import PRESETS, ViewStyle  # noqa: E402
from attnviz.gui.views.head_map_view import HeadMapView  # noqa: E402
from attnviz.bench.traces import sample_trace, synthetic_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def move_mouse(widget, pos) -> None:
    """A real mouse-move event (QTest's mouseMove moves the cursor, which offscreen Qt ignores)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent

    QApplication.processEvents()
    ev = QMouseEvent(QEvent.Type.MouseMove, QPointF(pos), QPointF(widget.mapToGlobal(pos)), Qt.NoButton,
                     Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(widget, ev)


def expected_indices(p: np.ndarray, masked: np.ndarray | None, vmax: float) -> np.ndarray:
    """Independent recomputation of the colour indices: round(p / vmax · 254), masked → 255."""
    out = np.floor(np.clip(p.astype(np.float64) / vmax * 254.0, 0, 254) + 0.5).astype(np.uint8)
    if masked is not None:
        out[masked] = 255
    return out


@pytest.fixture
def make_view(qtbot):
    def make(trace, sel=None, style=None):
        sel = sel or Selection()
        view = HeadMapView(selection=sel, style=style)
        qtbot.addWidget(view)
        view.resize(1200, 800)
        view.show()
        view.set_trace(trace)
        qtbot.waitExposed(view)
        return view, sel
    return make


def test_image_is_the_selected_head_and_labels_are_tokens(make_view):
    trace = sample_trace("decoder", T=10)
    view, sel = make_view(trace)
    sel.update(layer=1, head=2)
    probs = trace["L1.probs"][2]
    masked = np.isneginf(trace["L1.mask"])
    assert np.array_equal(view.head_matrix(), probs)
    np.testing.assert_array_equal(view.image_data, expected_indices(probs, masked, float(probs.max())))
    assert view.heatmap.left.labels == trace.tokens
    assert view.heatmap.bottom.labels == trace.tokens
    assert view.heatmap.bar.levels == (0.0, pytest.approx(float(probs.max())))
    sel.update(head=3)  # a head switch replaces the data, not the item
    item = view.heatmap.image
    np.testing.assert_array_equal(view.image_data, expected_indices(trace["L1.probs"][3], masked,
                                                                    float(trace["L1.probs"][3].max())))
    assert view.heatmap.image is item


def test_masked_cells_are_marked_not_zero(make_view):
    trace = sample_trace("decoder", T=8)
    view, sel = make_view(trace)
    masked = np.isneginf(trace["L0.mask"])
    assert masked.sum() == 8 * 7 // 2  # causal: the strict upper triangle
    assert np.all(view.image_data[masked] == 255) and np.all(view.image_data[~masked] < 255)
    path = view.heatmap.hatch.path
    assert path.contains(QPointF(5.5, 1.5)) and not path.contains(QPointF(1.5, 5.5))  # (col, row)
    assert view.heatmap.bar.show_masked
    assert "masked" in view.cell_text(1, 5)


def test_unit_scale_colours_zero_to_one(make_view):
    trace = sample_trace("encoder", T=6)
    view, sel = make_view(trace, style=ViewStyle(scale="unit"))
    probs = trace["L0.probs"][0]
    np.testing.assert_array_equal(view.image_data, expected_indices(probs, None, 1.0))
    assert view.heatmap.bar.levels == (0.0, 1.0)


def test_hover_shows_exact_value_and_click_selects_query(make_view, qtbot):
    trace = sample_trace("encoder", T=7)
    view, sel = make_view(trace)
    sel.update(layer=1, head=1)
    value = float(trace["L1.probs"][1, 4, 2])
    assert f"{value:.6f}" in view.cell_text(4, 2)
    assert view.cell_text(4, 2).startswith(f"{trace.tokens[4]} [4] → {trace.tokens[2]} [2]")
    view.grab()  # a paint settles the lazily updated view range
    pos = view.widget_pos(view.heatmap.vb, 2.5, 4.5)  # (x = key, y = query)
    move_mouse(view.canvas.viewport(), pos)
    qtbot.waitUntil(lambda: f"{value:.6f}" in view.hover_text, timeout=3000)
    qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=pos)
    assert (sel.query, sel.key) == (4, 2)
    rect = view.heatmap.row_marks[0].rect()
    assert view.heatmap.row_marks[0].isVisible() and (rect.top(), rect.height()) == (4, 1)
    assert view.heatmap.left.selected == 4


def test_cross_attention_shows_decoder_rows_and_encoder_columns(make_view):
    trace = sample_trace("encoder-decoder", T=7)
    view, sel = make_view(trace)
    sel.update(part="cross", head=1)
    probs = trace["L0.cross.probs"][1]
    assert view.image_data.shape == probs.shape == (6, 7)
    # each decoder row is named by the token that position produced ("→ y"), the columns by the source
    assert view.heatmap.left.labels == [f"→ {t}" for t in trace.tokens[1:]] + ["(end): nothing written"]
    assert view.heatmap.bottom.labels == trace.src_tokens
    assert "cross-attention" in view.heatmap.title.text
    # the last position wrote nothing: its row is washed out and greyed, yet drawn as the trace has it
    last = probs.shape[0] - 1
    veil = view.heatmap.veil
    assert veil.isVisible() and (veil.rect().top(), veil.rect().height(), veil.rect().width()) == (last, 1, 7)
    assert view.heatmap.left.dimmed == last and view.heatmap.left._text(last) == "(end): nothing written"
    assert f"{float(probs[last, 3]):.6f}" in view.cell_text(last, 3)  # hover: the exact number
    assert view.image_data.shape == probs.shape  # every row drawn, none dropped
    sel.update(part="self")
    assert not view.heatmap.veil.isVisible() and view.heatmap.left.dimmed is None


def test_presentation_style_changes_the_picture(make_view):
    trace = sample_trace("encoder", T=8)
    view, sel = make_view(trace)
    before = view.heatmap.left.minimumWidth()
    default_img = view.grab().toImage()
    view.set_style(PRESETS["presentation"])
    assert view.heatmap.left.minimumWidth() > before * 1.3  # larger fonts need a wider axis
    assert view.grab().toImage() != default_img


def test_render_figure_to_image_and_svg_keeps_text(make_view):
    from PySide6.QtSvg import QSvgGenerator

    trace = sample_trace("decoder", T=9)
    view, sel = make_view(trace)
    sel.update(query=3)
    for size, scale in ((QSize(1600, 1000), 1.0), (QSize(800, 500), 2.0)):
        img = QImage(size, QImage.Format_ARGB32)
        img.fill(0)
        painter = QPainter(img)
        view.render_figure(painter, QRectF(0, 0, size.width(), size.height()), scale=scale)
        painter.end()
        colours = {img.pixel(x, y) for x in range(0, size.width(), 37) for y in range(0, size.height(), 29)}
        assert len(colours) > 10  # a drawn figure, not an empty canvas
    img.save(f"{SHOTS}/head_map_render_scale2.png")
    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(1200, 800))
    gen.setViewBox(QRectF(0, 0, 1200, 800))
    painter = QPainter(gen)
    view.render_figure(painter, QRectF(0, 0, 1200, 800))
    painter.end()
    svg = bytes(buf.data()).decode("utf-8")
    texts = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    for tok in trace.tokens:
        assert tok.replace("'", "&apos;") in texts or tok in texts
    assert "attention weight" in texts and "fixed scale 0–1" in texts  # the bar: what, then which scale
    # the on-screen figure is back at its own size after the export
    assert abs(view.figure.geometry().width() - view.canvas.viewport().width()) < 2


def test_screenshot(make_view):
    trace = sample_trace("decoder", T=12)
    view, sel = make_view(trace)
    sel.update(layer=1, head=1, query=5)
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/head_map.png")


def test_rotated_labels_stay_inside_the_axis_cache(make_view):
    # the axis is drawn through a pixmap cache the size of its bounding rectangle: the 45° labels
    # run left past the axis' own rectangle and were cut ("‹CLS]") until the rectangle included them
    import math

    trace = sample_trace("encoder", T=24)
    view, sel = make_view(trace)
    view.resize(420, 500)
    QApplication.processEvents()
    axis = view.heatmap.bottom
    assert axis.rotated
    first = axis._metrics().horizontalAdvance(axis._text(0))
    left = axis._local(axis.centers[0]) - first * math.cos(math.radians(axis.angle))
    assert axis.boundingRect().left() <= left


def test_a_new_input_is_drawn_in_one_paint(make_view, qtbot, monkeypatch):
    # pyqtgraph applied a new range while painting, and the changed transform and axes made Qt paint
    # the whole figure again: about 6 ms more on every keystroke of a 50-token input
    import pyqtgraph as pg

    paints = []
    original = pg.GraphicsView.paintEvent

    def counting(self, event):
        paints.append(self)
        return original(self, event)

    monkeypatch.setattr(pg.GraphicsView, "paintEvent", counting)  # before the view exists: PySide caches
    view, sel = make_view(sample_trace("decoder", T=30))
    qtbot.wait(50)
    assert paints, "the counter sees no paints"
    for T in (31, 30, 31):  # typing and deleting changes the matrix size
        paints.clear()
        view.set_trace(sample_trace("decoder", T=T))
        for _ in range(3):
            QApplication.processEvents()
        assert len(paints) == 1, f"T={T}: {len(paints)} paints"


def test_title_names_the_map_again_after_the_view_was_cleared(make_view):
    """A model switch clears the view ("no input yet") and then shows a trace with the same layer, head
    and scale as before: the title must name the map again (it stayed "no input yet" on screen while
    the map was drawn, because the title cache still held the old map's title)."""
    trace = sample_trace("encoder", T=8)
    view, sel = make_view(trace)
    sel.update(layer=1, head=0)
    shown = view.heatmap.title.text
    assert "Layer 1 · head 0" in shown
    view.set_trace(None)
    assert "no input yet" in view.heatmap.title.text
    view.set_trace(sample_trace("encoder", T=8))  # the next model's first trace: same layer, head, scale
    assert "Layer 1 · head 0" in view.heatmap.title.text and "no input yet" not in view.heatmap.title.text


def test_an_empty_map_draws_no_colour_bar(make_view):
    """Issue 36: a refused input (empty text, "   ") cleared the map but left a lone colour bar beside it. An
    empty view draws no scale; the next input's map brings its bar back. Control: a drawn map has its bar."""
    view, sel = make_view(sample_trace("encoder", T=8))
    sel.update(query=2)
    assert view.heatmap.bar.isVisible() and view.heatmap.row_marks[0].isVisible()  # the control: a map, its marks
    view.set_trace(None, empty_reason="the input was refused: the text is empty")
    assert not view.heatmap.bar.isVisible() and "refused" in view.heatmap.title.text
    assert not any(m.isVisible() for m in view.heatmap.row_marks)  # nor the last map's boxed row
    view.set_trace(sample_trace("encoder", T=8))
    assert view.heatmap.bar.isVisible()
