"""The matrix form's one-head parts name every row (issue 36): up to 24 tokens all of them; a longer input (48
tokens) shows 24 positions around the selected query, says which, and names each of them at 12 px or more, in
a dock of a 1920×1080 and of a 1280×720 window (at 48 tokens it named every 7th row, its T×T maps ~96 px)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from walkthrough_fixtures import matrix_form_shown  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402

# the Walkthrough dock's figure area in the app's window (measured on screen: 1920×1080 and 1280×720)
DOCK_SIZES = [(1500, 820), (980, 470)]


@pytest.fixture(scope="module")
def trace48():
    return sample_trace("decoder", T=48, n_heads=2, d_model=16)


def _shown(qtbot, trace, size, section: str, query: int):
    return matrix_form_shown(qtbot, trace, size, query=query, section=section)


def _problems(w, what: str) -> list[str]:
    from test_layout_audit_lesson import matrix_form_label_problems

    return matrix_form_label_problems(w, what)


@pytest.mark.parametrize("size", DOCK_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("section", ["head", "output"])
def test_48_tokens_show_24_named_rows_around_the_query(qtbot, trace48, size, section):
    w = _shown(qtbot, trace48, size, section, query=30)
    f = w.form
    assert f.windowed and f.rows == (18, 42) and f.cols == (18, 42), (f.rows, f.cols)
    p = w.grids["P"]
    assert p.values.shape == (24, 24)
    assert p.row_labels == [str(t) for t in trace48.tokens[18:42]]
    assert p.highlight_rows == {12}  # query 30, at its row of the window
    texts = " ".join(label.text() for label in w.board.findChildren(QLabel))
    assert "queries 18–41 and keys 18–41 of 48" in texts and "over all 48 keys" in texts
    assert not _problems(w, f"{section} {size}")


def test_the_other_parts_keep_every_token(qtbot, trace48):
    """The concatenated heads and the block are not windowed (their rows are not T×T maps)."""
    w = _shown(qtbot, trace48, DOCK_SIZES[0], "head", query=30)
    w.set_section("heads")
    qtbot.waitUntil(lambda: w.form is not None and not w.form.windowed, timeout=30_000)
    assert w.form.X.shape[0] == 48


def test_24_tokens_are_shown_whole(qtbot):
    trace = sample_trace("decoder", T=24, n_heads=2, d_model=16)
    w = _shown(qtbot, trace, DOCK_SIZES[1], "head", query=5)
    assert not w.form.windowed and w.grids["P"].values.shape == (24, 24)
    assert not _problems(w, "24 tokens")


def test_without_the_window_48_rows_are_not_all_named(qtbot, trace48, monkeypatch):
    """Negative control: the whole 48 rows in the same dock name every k-th row (what the window is for)."""
    import attnviz.gui.walkthrough.matrix_form_widget as mfw

    monkeypatch.setattr(mfw, "NAMED_ROWS", 1_000)
    w = _shown(qtbot, trace48, DOCK_SIZES[1], "head", query=30)
    assert not w.form.windowed
    assert min(g.row_label_stride() for g in w.grids.values() if g.row_labels) > 1
