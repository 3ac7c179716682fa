"""The matrix form's Q Kᵀ / scaled / P maps at 1280×720 (issue 36): the row of three 24-column maps, every column
named at 12 px, needs ~1,400 px; the Walkthrough dock of a 1280×720 window is ~980 px wide and scrolled sideways
(K and V of the row above cut until scrolled). Narrow, P goes under the scaled map: no sideways scroll, the three
maps still drawn to scale (equal square cells), every column named at 12 px or more — docked and presented (F5
drew the upright labels 8–11 px at 720 lines). A 1920×1080 dock keeps the one line."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from walkthrough_fixtures import matrix_form_shown  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402

# the Walkthrough dock's figure area in the app's window (test_matrix_form_named_rows.DOCK_SIZES)
DOCK_1080, DOCK_720 = (1500, 820), (980, 470)
MAPS = ("QK", "masked", "P")  # a decoder's three T×T maps


@pytest.fixture(scope="module")
def trace24():
    return sample_trace("decoder", T=24, n_heads=2, d_model=16)


def _problems(w, what: str) -> list[str]:
    """Sideways scrolling, maps not to scale (cells unequal or not square), a column unnamed or under 12 px."""
    from layout_audit import grid_problems

    out = []
    if w.scroll.horizontalScrollBar().maximum() > 0:
        out.append(f"{what}: scrolls sideways by {w.scroll.horizontalScrollBar().maximum()} px")
    cells = {n: w.grids[n]._cells()[1:] for n in MAPS}
    widths = [c for cell in cells.values() for c in cell]
    if max(widths) - min(widths) > 0.5:
        out.append(f"{what}: the T×T maps' cells differ {cells}")
    for n in MAPS:
        out += grid_problems(w.grids[n], 1.0, 12.0, f"{what} {n}")
    return out


def test_the_maps_wrap_in_a_1280x720_dock_and_keep_every_column(qtbot, trace24):
    w = matrix_form_shown(qtbot, trace24, DOCK_720)
    assert not _problems(w, "docked 1280×720")
    assert w.maps_row.wrapped
    # P under the scaled map: the same column, the next line
    mid, p = w.grids["masked"], w.grids["P"]
    assert abs(p.mapTo(w, p.rect().topLeft()).x() - mid.mapTo(w, mid.rect().topLeft()).x()) <= 1
    assert p.mapTo(w, p.rect().topLeft()).y() > mid.mapTo(w, mid.rect().bottomLeft()).y()
    # and K and V of the row above are on screen, not cut at the edge
    for name in ("K", "V"):
        g = w.grids[name]
        assert g.mapTo(w.scroll.viewport(), g.rect().topRight()).x() <= w.scroll.viewport().width(), name


def test_a_1920x1080_dock_keeps_one_line(qtbot, trace24):
    w = matrix_form_shown(qtbot, trace24, DOCK_1080)
    assert not w.maps_row.wrapped
    assert not _problems(w, "docked 1920×1080")
    assert len({round(w.grids[n].mapTo(w, w.grids[n].rect().topLeft()).y()) for n in MAPS}) == 1


def test_the_check_sees_sideways_scrolling(qtbot, trace24):
    """Negative control: a dock narrower than even two maps need scrolls sideways, and the check says so."""
    w = matrix_form_shown(qtbot, trace24, (560, 470))
    assert any("sideways" in p for p in _problems(w, "560 px"))


def test_presented_at_720_lines_names_every_column_at_12px(qtbot, trace24):
    from attnviz.gui.style import PRESETS

    w = matrix_form_shown(qtbot, trace24, (1280, 720), style=PRESETS["presentation"])
    assert not _problems(w, "F5 1280×720")
    for n in MAPS:
        assert w.grids[n].col_label_stride() == 1


def test_presented_upright_labels_without_the_12px_rule_are_smaller(qtbot, trace24, monkeypatch):
    """Negative control: at the presenting floor in proportion (8 px at 720 lines) the check finds them (the
    matrix form holds the docked floor for its figures, so that floor is asked without the hold)."""
    from attnviz.gui.style import PRESETS
    from attnviz.gui.walkthrough.matrix_grid_labels import MatrixGridLabels
    from attnviz.gui.widgets.legible import FULL_HD_LINES, PRESENTED_FLOOR_PT

    monkeypatch.setattr(MatrixGridLabels, "col_floor_pt",
                        lambda self, least=False: PRESENTED_FLOOR_PT * max(2 / 3, min(1.0, self.window().height() / FULL_HD_LINES)))
    w = matrix_form_shown(qtbot, trace24, (1280, 720), style=PRESETS["presentation"])
    assert any(" labels ink " in p for p in _problems(w, "F5 1280×720"))  # presented: measured as ink


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_the_overview_fits_a_1280x720_dock_with_every_row_named(qtbot, kind):
    """"overview: everything at once": the Q Kᵀ … P V = Z row and the block's row wrap as the one-head maps do (they
    scrolled sideways by 55–900 px), and Z_0 beside A's stacked title names every row (it named every other)."""
    from layout_audit import grid_problems

    trace = sample_trace(kind, T=12, n_heads=4, d_model=64)
    w = matrix_form_shown(qtbot, trace, DOCK_720)
    w.set_section("all")
    for _ in range(10):
        QApplication.processEvents()
    assert w.scroll.horizontalScrollBar().maximum() == 0
    assert w.maps_row.wrapped
    problems = [p for g in w.grids.values() if g.row_labels for p in grid_problems(g, 1.0, 12.0, g.name)]
    assert not problems, problems
