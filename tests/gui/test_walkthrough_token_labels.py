"""The walkthrough's matrices and query chips name tokens as every other view does (text/token_display): a
byte-level BPE model's "Ġcat" reads "cat" (the audit found "Ġcat" and a lone "G" in the matrix form, the many-heads
figure and six steps). Controls: labels that are not tokenizer pieces ("[CLS]", "→ vidas", "0 [BOS]") are kept,
a space still reads "␣", an empty token is marked rather than left blank."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.gui.walkthrough.matrix_grid import MatrixGrid, visible_label  # noqa: E402
from attnviz.gui.walkthrough.query_picker import _shown  # noqa: E402


def test_tokenizer_pieces_read_as_text_in_the_matrices(qtbot):
    grid = MatrixGrid("Q")
    qtbot.addWidget(grid)
    grid.set_data(np.zeros((3, 3)), "Q", row_labels=["Ġthe", "Ġcat", "Ċ"], col_labels=["<s>", "Ġsat", "âĢĻ"])
    assert grid.row_labels == ["the", "cat", "⏎"]
    assert grid.col_labels == ["<s>", "sat", "’"]


def test_labels_that_are_not_pieces_are_kept():
    for label in ("[CLS]", "→ vidas", "(end): nothing written", "0 [BOS]", "3,3", "it"):
        assert visible_label(label) == label  # control: nothing else is rewritten
    assert visible_label(" ") == "␣" and _shown(" ") == "␣"
    assert visible_label("") == "∅"  # reads as nothing: a mark, the row still named
    assert _shown("Ġtired") == "tired"
