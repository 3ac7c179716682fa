"""TokenLinesView: lines are the head's weights, hover keeps one token's lines, clicks select."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.views.token_lines_view import FADE, MIN_WEIGHT, TokenLinesView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

SHOTS = "/tmp/attnviz-shots"


def make(qtbot, trace, sel=None):
    sel = sel or Selection()
    view = TokenLinesView(selection=sel)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    view.grab()
    return view, sel


def token_point(view, side: str, i: int):
    lx, rx, text_w, top, step = view.lines._geometry()
    x = lx - 10 if side == "left" else rx + 10
    return view.widget_pos(view.lines, x, top + (i + 0.5) * step)


class RecordingPainter:
    """Stands in for a QPainter in _paint_lines: records each line with the pen it was drawn with."""

    def __init__(self):
        self.pen = None
        self.lines = []  # (colour rgb, alpha, QLineF)

    def setPen(self, pen):
        self.pen = pen

    def drawLines(self, lines):
        c = self.pen.color()
        self.lines += [((c.red(), c.green(), c.blue()), c.alphaF(), line) for line in lines]


def test_all_heads_all_lines_in_distinct_colours(qtbot):
    trace = sample_trace("encoder", T=9, n_heads=4)
    view, sel = make(qtbot, trace)
    sel.update(layer=1)
    assert view.shown_heads == [0, 1, 2, 3] and "all heads" in view.title_item.text  # BertViz's start
    for h in range(4):
        rows = view.lines.lines(h)
        assert rows.shape == (81, 4)  # T×T lines per head
        w = trace["L1.probs"][h].astype(np.float64)
        np.testing.assert_allclose(rows[:, 2].reshape(9, 9), w, rtol=1e-6)
        np.testing.assert_array_equal(rows[:, 3], rows[:, 2])  # nothing focused: opacity = weight
    rec = RecordingPainter()
    lx, rx, text_w, top, step = view.lines._geometry()
    view.lines._paint_lines(rec, lx, rx, top, step)
    colours = {}
    for rgb, alpha, _ in rec.lines:
        colours[rgb] = colours.get(rgb, 0) + 1
    assert len(colours) == 4  # one distinct colour per head
    visible = sum(int((trace["L1.probs"][h] >= MIN_WEIGHT).sum()) for h in range(4))
    assert len(rec.lines) == visible  # every line that is not invisible (alpha < 1/255) is drawn
    # heads leave a token at their own offsets: two heads' lines of one pair do not coincide
    ends = {round(line.y1(), 3) for _, _, line in rec.lines if abs(line.y1() - (top + 4.5 * step)) < step / 2}
    assert len(ends) == 4
    # the strongest lines are drawn last, whatever their head
    alphas = [a for _, a, _ in rec.lines]
    assert alphas == sorted(alphas)


def test_lines_are_the_selected_heads_weights(qtbot):
    trace = sample_trace("encoder", T=9)
    view, sel = make(qtbot, trace)
    view.set_heads([2])
    sel.update(layer=1, head=2)
    assert view.shown_heads == [2]
    sel.update(head=1)
    assert view.shown_heads == [1]  # one head shown follows the selection
    w = trace["L1.probs"][1]
    rows = view.lines.visible_lines(1)
    q, k = np.nonzero(w >= MIN_WEIGHT)
    np.testing.assert_array_equal(rows[:, :2], np.stack([q, k], 1))
    np.testing.assert_allclose(rows[:, 2], w[q, k], rtol=1e-6)
    assert view.lines.left == trace.tokens and view.lines.right == trace.tokens
    view.set_heads([0, 3])
    assert view.lines.heads == [0, 3] and "heads 0, 3" in view.title_item.text


def test_hover_focuses_one_tokens_lines_and_click_selects(qtbot):
    trace = sample_trace("encoder", T=8)
    view, sel = make(qtbot, trace)
    view.lines.hover = ("left", 3)
    rows = view.lines.visible_lines(0)
    assert set(rows[:, 0]) == {3}
    assert len(rows) == int((trace["L0.probs"][0, 3] >= MIN_WEIGHT).sum())
    all_rows = view.lines.lines(0)  # the others are still drawn, faded
    others = all_rows[all_rows[:, 0] != 3]
    np.testing.assert_allclose(others[:, 3], others[:, 2] * FADE)
    view.lines.hover = ("right", 5)
    assert set(view.lines.visible_lines(0)[:, 1]) == {5}
    view.lines.hover = None
    qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=token_point(view, "left", 4))
    assert sel.query == 4 and view.lines.selected == 4
    assert set(view.lines.visible_lines(0)[:, 0]) == {4}
    j = int(np.argmax(trace["L0.probs"][0, 4]))
    assert f"{trace.tokens[j]} [{j}] {float(trace['L0.probs'][0, 4, j]):.6f}" in view.token_text("left", 4)
    qtbot.mouseClick(view.canvas.viewport(), Qt.LeftButton, pos=token_point(view, "left", 4))
    assert sel.query is None  # a second click clears


def test_patch_inputs_label_the_grid_rows(qtbot):
    trace = sample_trace("vit")  # 4×4 patches and CLS
    view, _ = make(qtbot, trace)
    assert view.lines.grid == (4, 4) and view.lines.n_prefix == 1
    pic = view.lines.picture  # the plain input beside the queries, pixel for pixel
    assert (pic.width(), pic.height()) == trace["image"].shape[1::-1]
    px = pic.pixelColor(3, 5)
    expected = (np.clip(trace["image"][5, 3], 0, 1) * 255).round().astype(int)
    assert (px.red(), px.green(), px.blue()) == tuple(expected)
    view.resize(700, 150)  # too short for 17 labels even at the smallest font
    QApplication.processEvents()
    shown = view.lines.labelled("left")
    assert shown == [0, 1, 5, 9, 13]  # CLS and the first patch of every grid row
    view.resize(1200, 800)
    QApplication.processEvents()
    assert view.lines.labelled("left") == list(range(17))  # room for all: all


def test_cross_attention_uses_decoder_and_encoder_tokens(qtbot):
    trace = sample_trace("encoder-decoder", T=7)
    sel = Selection()
    sel.update(part="cross")
    view, _ = make(qtbot, trace, sel)
    # decoder positions are named by the token they produced, the source by its tokens
    assert view.lines.left == [f"→ {t}" for t in trace.tokens[1:]] + ["(end): nothing written"]
    assert view.lines.right == trace.src_tokens
    assert view.lines.weights.shape == trace["L0.cross.probs"].shape
    assert view.lines.dimmed == len(view.lines.left) - 1  # the row that wrote nothing: drawn grey
    sel.update(part="self")
    assert view.lines.dimmed is None
    sel.update(part="cross")
    view.set_heads([0, 1, 2, 3])
    view.set_style(PRESETS["presentation"])
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/token_lines_cross.png")
    sel.update(part="self")
    assert view.lines.right == trace.tokens
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/token_lines.png")


def test_long_inputs_draw_the_strongest_lines_and_say_so(qtbot):
    from attnviz.bench.traces import synthetic_trace
    from attnviz.gui.views.token_lines_view import MAX_LINES

    trace = synthetic_trace(T=120, n_layers=1, n_heads=4, causal=False)
    view, sel = make(qtbot, trace)
    per_head, cutoff = view.lines.drawn_lines()
    drawn = np.concatenate([r[:, 3] for r in per_head.values()])
    every = np.concatenate([view.lines.lines(h)[:, 3] for h in range(4)])
    assert len(drawn) <= MAX_LINES < int((every >= MIN_WEIGHT).sum())
    assert cutoff > 0 and drawn.min() >= cutoff and f"fainter than {cutoff:.3f} left out" in view.title_item.text
    assert int((every >= cutoff).sum()) == len(drawn)  # exactly the strongest ones
    sel.update(query=7)  # a focused token keeps all its lines, however faint
    per_head, _ = view.lines.drawn_lines()
    for h, rows in per_head.items():
        mine = rows[rows[:, 0] == 7]
        assert len(mine) == int((trace["L0.probs"][h, 7] >= MIN_WEIGHT).sum())


def test_the_heads_legend_never_covers_the_query_and_key_headings(qtbot):
    """Eight heads in a dock of the 1920×1080 window (~620 px): the legend is wider than the gap between
    "query" and "key" (the control: centred in the headings' row it covered them, issue 36), so it takes rows
    of its own under them; the token rows start below it, and every entry is inside the figure."""
    trace = sample_trace("encoder", T=9, n_heads=8)
    view, sel = make(qtbot, trace)
    view.resize(620, 600)
    QApplication.processEvents()
    item = view.lines
    assert item.heads == list(range(8))
    lx, rx, text_w, top, step = item._geometry()
    legend = item.legend_rects()
    assert len(legend) == 8
    assert sum(r.width() for r in legend) > rx - lx  # control: the headings' row has no room for it
    for rect in legend:
        assert not any(rect.intersects(h) for h in item.heading_rects()), "a legend entry covers a heading"
        assert rect.bottom() <= top + 0.5, "the legend runs into the token rows"
        assert 0 <= rect.left() and rect.right() <= item.boundingRect().width() + 0.5
    fm = item.style.metrics()  # each entry's words end a line's height before the next swatch ("head 0▬head 1")
    for h, rect in zip(item.heads, legend):
        ink = fm.height() * 1.4 + 4 + fm.horizontalAdvance(f"head {h}")
        assert rect.width() - ink >= 0.9 * fm.height(), (rect.width(), ink, fm.height())


def test_a_32_head_model_keeps_its_head_boxes_in_a_popup_not_a_row_wider_than_the_screen(qtbot):
    """m_32x32 at 1280×720: 32 check boxes in the controls row made the window ~2,000 px wide, the figure off the
    screen's right edge. Beyond INLINE_HEADS they sit in the "heads" button's pop-up; the control: 4 heads inline."""
    from attnviz.bench.traces import sample_trace
    from attnviz.gui.views import token_lines_view
    from attnviz.gui.views.token_lines_view import TokenLinesView
    from attnviz.selection import Selection

    INLINE_HEADS = getattr(token_lines_view, "INLINE_HEADS", 12)  # noqa: N806 - the module's constant
    for heads in (32, 4):
        view = TokenLinesView(selection=Selection())
        qtbot.addWidget(view)
        view.resize(972, 493)
        view.show()
        view.set_trace(sample_trace("decoder", T=8, n_heads=heads, d_model=2 * heads))
        qtbot.wait(50)
        assert len(view.head_boxes) == heads and view.shown_heads == list(range(heads))
        if heads > INLINE_HEADS:
            assert view.minimumSizeHint().width() <= 972, view.minimumSizeHint().width()
            assert view.heads_button.isVisible() and view.heads_button.text() == "heads: all 32"
            # room for the pop-up arrow beside the words (it was drawn over "32")
            words = view.heads_button.fontMetrics().horizontalAdvance(view.heads_button.text())
            assert view.heads_button.width() >= words + 24, (view.heads_button.width(), words)
            assert not any(b.isVisibleTo(view) for b in view.head_boxes)  # in the closed pop-up
            view.head_boxes[5].setChecked(False)
            assert 5 not in view.lines.heads and view.heads_button.text() == "heads: 31 of 32"
        else:
            assert not view.heads_button.isVisible() and all(b.isVisible() for b in view.head_boxes)
