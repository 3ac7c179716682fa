"""A walkthrough heading longer than the board is wrapped onto more lines, not cut at the board's edge (the
32-head model's "Layer 26 · head 9 (reads key/value head 2): Z = softmax(Q Kᵀ × 0.25 + M) V" lost its end in
a docked window); a heading that fits keeps one line (the control)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

LONG = "Layer 26 · head 9 (reads key/value head 2):  Z = softmax(Q Kᵀ × 0.25 + M) V"


def _heading(qtbot, text: str, width: int):
    from attnviz.gui.walkthrough.figure import FigureBoard

    board = FigureBoard()
    qtbot.addWidget(board)
    board.resize(width, 600)
    board.show()
    head = board.add_heading(text)
    board.finish()
    for _ in range(3):
        QApplication.processEvents()
    return board, head  # the board kept alive: qtbot holds it weakly


def test_a_long_heading_takes_two_lines(qtbot):
    _board, head = _heading(qtbot, LONG, 500)
    line = QFontMetricsF(head.font()).height()
    assert QFontMetricsF(head.font()).horizontalAdvance(LONG) > head.width()  # the condition: it does not fit
    assert head.wordWrap() and head.height() >= 1.9 * line, (head.height(), line)


def test_a_short_heading_keeps_one_line(qtbot):
    _board, head = _heading(qtbot, "Layer 0 · head 1", 500)
    line = QFontMetricsF(head.font()).height()
    assert head.height() < 1.9 * line
