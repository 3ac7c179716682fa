"""Issue 36: presented (F5) on a 1280×720 screen, the matrix form's labels are at least the docked 12 px in every
"show:" part. Presenting's own floor goes with the screen (8 px at 720 lines), and the X, Q, K, V rows of 24
tokens, the concat strip's 48 and the overview's were fitted down to it: 7-px names under 36-px operators, a
figure less legible than the docked one. Rows that do not fit at 12 px are named every k-th instead, and the
overview's operators are no larger than the grids' titles."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from walkthrough_fixtures import matrix_form_shown  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.style import PRESETS  # noqa: E402

MIN_PX = 12.0  # the docked floor (9 pt at 96 dpi)
SMALL = (1280, 720)


def _px(font) -> float:
    return font.pointSizeF() * 96 / 72


@pytest.fixture(scope="module")
def trace48():
    return sample_trace("decoder", T=48, n_heads=4, d_model=16)


def _presented(qtbot, trace, section, size=SMALL):
    from PySide6.QtWidgets import QApplication

    w = matrix_form_shown(qtbot, trace, size, query=30, section="head", style=PRESETS["presentation"])
    w.set_section(section)  # drawn at once from the form computed (the fixture waits for "head"'s P map)
    for _ in range(5):
        QApplication.processEvents()
    return w


def _small_row_names(w) -> list[str]:
    """Every visible grid's (and the concat strip's) row names smaller than the docked 12 px."""
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    parts = [(g.title, g) for g in w.findChildren(MatrixGrid) if g.isVisibleTo(w) and g.values.size and g.row_labels]
    parts += [("concat(Z)", c) for c in w.findChildren(ConcatFigure) if c.isVisibleTo(w) and c.q_tok]
    assert parts, "no part of the figure names rows"
    return [f"{title}: {_px(p.row_label_font()):.1f} px" for title, p in parts
            if _px(p.row_label_font()) < MIN_PX - 0.05]


@pytest.mark.parametrize("section", ["head", "output", "heads", "block", "all"])
def test_presented_row_names_are_at_least_the_docked_size(qtbot, trace48, section):
    w = _presented(qtbot, trace48, section)
    assert _small_row_names(w) == []


def test_without_the_held_floor_presented_rows_shrink(qtbot, trace48, monkeypatch):
    """Control: the same part with its rows held to presenting's floor in proportion (8 px at 720 lines; the held
    floor and the presented ink floor, legible.label_floor_pt, taken away) draws its 24 X, Q, K, V rows under 12 px,
    so the check above can fail."""
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.walkthrough.matrix_grid_labels import MatrixGridLabels
    from attnviz.gui.widgets.legible import FULL_HD_LINES, HELD_FLOOR, PRESENTED_FLOOR_PT

    monkeypatch.setattr(MatrixGridLabels, "row_floor_pt",
                        lambda self, least=False: PRESENTED_FLOOR_PT * max(2 / 3, min(1.0, self.window().height() / FULL_HD_LINES)))
    w = _presented(qtbot, trace48, "head")
    w.setProperty(HELD_FLOOR, None)
    w._draw()  # the grids made anew, under no held floor
    for _ in range(5):
        QApplication.processEvents()
    assert any(name.startswith("X") for name in _small_row_names(w))


def test_presented_operators_are_no_larger_than_the_titles(qtbot, trace48):
    """The overview's "× 0.5", "+ M", "softmax" were 2× the label size (36 px) beside 12-px row names."""
    from attnviz.gui.walkthrough.maps_row import WrappingMapsRow

    w = _presented(qtbot, trace48, "all")
    title_px = _px(w.grids["QK"]._fonts()[1])
    ops = [lab for row in w.findChildren(WrappingMapsRow) for lab in row.ops]
    assert ops
    assert all(_px(lab.font()) <= title_px + 0.05 for lab in ops), [(_px(lab.font()), title_px) for lab in ops]
