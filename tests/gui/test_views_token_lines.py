"""TokenLinesView: lines are the head's weights, hover keeps one token's lines, clicks select."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.views.token_lines_view import MIN_WEIGHT, TokenLinesView  # noqa: E402
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


def test_lines_are_the_selected_heads_weights(qtbot):
    trace = sample_trace("encoder", T=9)
    view, sel = make(qtbot, trace)
    sel.update(layer=1, head=2)
    assert view.shown_heads == [2]  # one head shown follows the selection
    w = trace["L1.probs"][2]
    rows = view.lines.visible_lines(2)
    q, k = np.nonzero(w >= MIN_WEIGHT)
    np.testing.assert_array_equal(rows[:, :2], np.stack([q, k], 1))
    np.testing.assert_allclose(rows[:, 2], w[q, k], rtol=1e-6)
    assert view.lines.left == trace.tokens and view.lines.right == trace.tokens
    view.set_heads([0, 3])
    assert view.lines.heads == [0, 3] and "heads 0, 3" in view.title_item.text


def test_hover_keeps_only_that_tokens_lines_and_click_selects(qtbot):
    trace = sample_trace("encoder", T=8)
    view, sel = make(qtbot, trace)
    view.lines.hover = ("left", 3)
    rows = view.lines.visible_lines(0)
    assert set(rows[:, 0]) == {3}
    assert len(rows) == int((trace["L0.probs"][0, 3] >= MIN_WEIGHT).sum())
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


def test_cross_attention_uses_decoder_and_encoder_tokens(qtbot):
    trace = sample_trace("encoder-decoder", T=7)
    sel = Selection()
    sel.update(part="cross")
    view, _ = make(qtbot, trace, sel)
    assert view.lines.left == trace.tokens and view.lines.right == trace.src_tokens
    assert view.lines.weights.shape == trace["L0.cross.probs"].shape
    view.set_heads([0, 1, 2, 3])
    view.set_style(PRESETS["presentation"])
    os.makedirs(SHOTS, exist_ok=True)
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/token_lines_cross.png")
    sel.update(part="self")
    assert view.lines.right == trace.tokens
    QApplication.processEvents()  # let pending layout requests apply before the picture
    assert view.grab().save(f"{SHOTS}/token_lines.png")
