"""A T×T map names its keys as the maps beside it do (issue 36, seen in translate ▸ Matrix form at 1280×720): P,
whose long probabilities ("2e-05") asked for cells wide enough for level labels, wrote its keys level and elided
("… … … … a … … …") beside Q Kᵀ's upright ones once drawn as a heatmap; and a label cut to its ten characters
says so ("(end): nothing written" read "(end): not")."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

KEYS = ["the", "big", "dog", "sees", "a", "small", "cat", "[EOS]"]


def _p_map(keys, min_side=180.0):
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    g = MatrixGrid("P")
    p = np.random.default_rng(0).dirichlet(np.full(len(keys), 0.2), size=10)
    p[0, 0] = 2e-5  # a long number: wide preferred cells
    g.set_data(p, kind="prob", row_labels=[f"q{i}" for i in range(10)], col_labels=keys, min_side=min_side)
    return g


def test_a_tt_maps_word_keys_stand_upright(qapp):
    assert _p_map(KEYS)._rotated_cols()


def test_one_letter_keys_stay_level(qapp):
    """Control: keys that fit the map's narrowest cells are written level, as before (charlm, induction)."""
    assert not _p_map(list("abcdefgh"))._rotated_cols()


def test_a_cut_label_ends_with_an_ellipsis(qapp):
    from attnviz.gui.walkthrough.matrix_grid_paint import LABEL_CHARS, short_label

    assert short_label("extraordinarily") == "extraordi…"
    assert len(short_label("extraordinarily")) == LABEL_CHARS
    assert short_label("animal") == "animal" and short_label("0123456789") == "0123456789"  # whole when it fits


def test_the_end_row_is_named_whole_in_a_grid(qapp):
    """Issue 36: translate's matrix-form, Z = P V and many-heads grids cut the row after [EOS] to "(end): no…".
    A grid now names it by its short name "(end)", whole; the hover keeps the full label. Control: any other long
    label is still cut with "…"."""
    from attnviz.analysis.decoder_positions import END, END_ROW
    from attnviz.gui.walkthrough.matrix_grid_paint import short_label

    assert short_label(END_ROW) == END
    assert short_label("→ " + "x" * 20).endswith("…")  # control: other long labels are cut as before
    g = _grid_with_rows(["→ un", "→ chat", END_ROW])
    painted = _painted_texts(g)
    assert END in painted and not any(t.startswith(END) and t != END for t in painted), painted
    assert END_ROW in g.describe_cell(2, 0)  # the hover names the whole row


def _grid_with_rows(rows):
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    g = MatrixGrid("P")
    p = np.random.default_rng(1).dirichlet(np.ones(4), size=len(rows))
    g.set_data(p, kind="prob", row_labels=rows, col_labels=["le", "chat", "dort", "[EOS]"], min_side=160.0)
    g.resize(420, 300)
    return g


def _painted_texts(grid) -> list[str]:
    """Every string the grid draws, caught by a painter that records drawText."""
    from PySide6.QtGui import QImage, QPainter

    seen: list[str] = []

    class Recorder(QPainter):
        def drawText(self, *args):
            seen.extend(a for a in args if isinstance(a, str))
            return super().drawText(*args)

    img = QImage(grid.width(), grid.height(), QImage.Format_ARGB32)
    p = Recorder(img)
    grid.paint(p)
    p.end()
    return seen
