"""Issue 36 item 10: a text rollout slide fills its page (the strips sat in a band across the middle, ≈55 % of a
1920×1080 page blank), and a decoder's keys after the query are marked masked, not coloured as a 0 share."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from attnviz.bench.traces import sample_trace
from tests.gui.test_views_rollout import make


def _blank_rows(img: QImage) -> float:
    """Share of the image's pixel rows that are wholly background (white)."""
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)[:, : img.width(), :3]
    return float((a.min(axis=(1, 2)) >= 250).mean())


def _slide(view, w: int, h: int) -> QImage:
    img = QImage(w, h, QImage.Format.Format_ARGB32)
    img.fill(0xFFFFFFFF)
    painter = QPainter(img)
    try:
        view.render_figure(painter, QRectF(0, 0, w, h), h / 600)
    finally:
        painter.end()
    return img


def test_blank_rows_control():
    img = QImage(40, 30, QImage.Format.Format_ARGB32)
    img.fill(0xFFFFFFFF)
    assert _blank_rows(img) == 1.0
    img.fill(0xFF000000)
    assert _blank_rows(img) == 0.0


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_text_slide_uses_the_page(qtbot, size, kind):
    """A short input's strips grow into the page: before, 50–60 % of the rows were blank."""
    view, _ = make(qtbot, sample_trace(kind, n_layers=2))
    blank = _blank_rows(_slide(view, *size))
    assert blank < 0.3, f"{blank:.0%} of a {size} slide's rows are blank"
    bar = view.bar.mapRectToScene(view.bar.boundingRect())
    strips = [s.mapRectToScene(s.boundingRect()) for s in view.strips.values()]
    top, bottom = min(r.top() for r in strips), max(r.bottom() for r in strips)
    assert bar.height() >= 0.8 * (bottom - top), ("the colour bar is shorter than the strips it keys", bar, top, bottom)


def test_decoder_keys_after_the_query_are_masked(qtbot):
    trace = sample_trace("decoder", n_layers=2)
    view, sel = make(qtbot, trace)
    sel.update(query=3)
    qtbot.waitUntil(lambda: view.strip_set.query == 3)
    strip = view.strips["rollout"]
    shown = view.strip_set.lo
    masked = np.flatnonzero(strip.masked) + shown
    assert list(masked) == list(range(4, len(trace.tokens))), masked
    view._hover_token("rollout", 5)
    assert "masked (after the query)" in view.hover_text
    view._hover_token("rollout", 2)  # control: a key the query sees gives its number
    assert "masked" not in view.hover_text and any(ch.isdigit() for ch in view.hover_text.split(":")[-1])
    assert "hatched: masked" in view.strip_set.caption()


def test_encoder_has_nothing_masked(qtbot):
    """Control: a bidirectional encoder hides nothing from its query; nothing hatched, no caption line."""
    from attnviz.analysis.rollout_window import masked_after

    trace = sample_trace("encoder", n_layers=2)
    assert masked_after(trace, "self", 1) is None
    view, sel = make(qtbot, trace)
    sel.update(query=1)
    qtbot.waitUntil(lambda: view.strip_set.query == 1)
    assert not view.strips["rollout"].masked.any()
    assert "hatched" not in view.strip_set.caption()


def test_masked_boxes_are_not_painted_as_a_zero_share(qtbot):
    """The hidden keys' boxes are painted in the masked colour and hatch, not the colour map's 0 (as they were)."""
    from PySide6.QtGui import QColor

    from attnviz.gui.style import colour_lut

    view, sel = make(qtbot, sample_trace("decoder", n_layers=2))
    sel.update(query=3)
    qtbot.waitUntil(lambda: view.strip_set.query == 3)
    strip = view.strips["raw"]
    img = QImage(int(strip.size().width()), int(strip.size().height()), QImage.Format.Format_RGB32)
    img.fill(0xFFFFFFFF)
    painter = QPainter(img)
    strip.paint(painter, None)
    painter.end()
    lut = colour_lut(view.style)

    def colours(i):  # the pixels along the box's left inner edge (text never reaches it)
        box = strip._boxes[i]
        return {QColor(img.pixel(int(box.left()) + 3, int(y))).getRgb()[:3]
                for y in range(int(box.top()) + 3, int(box.bottom()) - 3)}

    seen = strip.indices[2]  # control: a visible key's box is its colour
    assert colours(2) == {tuple(int(c) for c in lut[seen][:3])}
    zero = tuple(int(c) for c in lut[0][:3])
    hidden = colours(5)
    assert zero not in hidden and len(hidden) > 1, hidden  # the masked fill crossed by hatch lines


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_a_sentence_on_one_row_stays_on_one_row_when_it_fills_a_slide(qtbot, size):
    """Grown to fill a slide, translate's ten decoder tokens wrapped "na vidas [EOS]" onto a second row under the
    rest: the cells grow taller instead, and the sentence reads as one line."""
    view, _ = make(qtbot, sample_trace("decoder", T=10, n_layers=2))
    seen, orig = [], view._relayout

    def record(geom):
        orig(geom)
        seen.append({name: ({round(b.top()) for b in s._boxes}, s.zoom) for name, s in view.strips.items()
                     if s._boxes})
    view._relayout = record
    try:
        _slide(view, *size)
    finally:
        view._relayout = orig
    on_slide = seen[0]  # the layout the slide was drawn with (the screen's comes back after it)
    assert on_slide and all(len(rows) == 1 for rows, _ in on_slide.values()), on_slide
    assert all(zoom > 1.5 for _, zoom in on_slide.values()), on_slide  # control: it did grow to fill the page
