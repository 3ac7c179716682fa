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

    assert short_label("(end): nothing written") == "(end): no…"
    assert len(short_label("(end): nothing written")) == LABEL_CHARS
    assert short_label("animal") == "animal" and short_label("0123456789") == "0123456789"  # whole when it fits
