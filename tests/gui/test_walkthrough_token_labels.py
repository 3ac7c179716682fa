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


def _named_rows_clear(grid) -> tuple[float, bool]:
    """(pixel size of the row labels, whether neighbouring named rows keep a full line apart)."""
    from PySide6.QtGui import QFontMetricsF

    font = grid.row_label_font()
    px = font.pointSizeF() * grid.logicalDpiY() / 72
    return px, grid._cells()[2] * grid.row_label_stride() >= QFontMetricsF(font).height() - 1e-6


def test_six_steps_name_shapes_17_keys_apart_at_1280x720(qtbot):
    """Issue 36: at 1280×720 the Six steps' K and V named shapes' 17 keys ~11 px apart in a 14 px line: the
    labels ran together. Every key is named, ≥ 12 px, a line apart. Control: a grid of the old 0.8-line pitch
    at the same size runs them together."""
    import attnviz
    from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget
    from walkthrough_fixtures import show_widget

    trace = attnviz.load("shapes").trace(image=np.random.default_rng(0).random((32, 32, 3), np.float32)).trace
    w = show_widget(qtbot, WalkthroughWidget(), size=(960, 450))  # the tab's room in a 1280×720 window
    w.set_trace(trace)
    qtbot.waitUntil(lambda: "k" in w.grids and w.grids["k"].height() > 0, timeout=10000)
    try:  # laid out at the tab's size (after a heavier test the page settles a few turns later)
        qtbot.waitUntil(lambda: all(w.grids[n].row_label_stride() == 1 for n in ("k", "v")), timeout=5000)
    except Exception:
        pass  # the asserts below say what is wrong
    for name in ("k", "v"):
        grid = w.grids[name]
        assert grid.values.shape[0] == 17
        px, apart = _named_rows_clear(grid)
        assert px >= 12 - 0.05 and apart and grid.row_label_stride() == 1, (name, px, apart)
    control = MatrixGrid("k")  # the old pitch, squeezed to the height the old layout gave K (~11.5 px a row)
    qtbot.addWidget(control)
    control.set_data(w.grids["k"].values, "K", row_labels=w.grids["k"].row_labels)
    control.resize(189, 237)
    from PySide6.QtGui import QFontMetricsF

    # every row named at that pitch would run together (the grid now names every other one rather than do so)
    assert control._cells()[2] < QFontMetricsF(control.row_label_font()).height()


def test_a_thinned_grid_says_which_rows_it_names(qtbot):
    """32 keys in a short grid are named every k-th: the grid says so (its tooltip away from a cell); control:
    a grid that names every row says nothing."""
    grid = MatrixGrid("k")
    qtbot.addWidget(grid)
    grid.set_data(np.zeros((32, 4)), "K", row_labels=[f"t{i}" for i in range(32)])
    grid.resize(200, 120)
    grid.show()
    qtbot.waitExposed(grid)
    every = grid.row_label_stride()
    assert every > 1 and grid.toolTip().startswith("rows named: every ") and f"every {every}" in grid.toolTip()
    grid.resize(200, 900)  # room for every row: control
    qtbot.wait(10)
    assert grid.row_label_stride() == 1 and grid.toolTip() == ""
