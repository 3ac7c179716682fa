"""Issue 36: the matrix form's "one head: Z = P V → A" drawn to scale, and the many-heads outlines thin enough
for the values (32 heads in F5). Measured from where the figures draw each part, docked and presented."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from walkthrough_fixtures import make_trace, matrix_form_shown, model_dir  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402

SIZES = [(1500, 820), (980, 470)]  # a 1920×1080 and a 1280×720 window's walkthrough dock


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return make_trace(model_dir(tmp_path_factory.mktemp("m") / "dec", n_heads=4, d_model=16))


@pytest.mark.parametrize("presented", [False, True], ids=["docked", "F5"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_output_part_is_drawn_to_scale(qtbot, trace, size, presented):
    w = matrix_form_shown(qtbot, trace, size, section="output", style=PRESETS["presentation"] if presented else None)
    w.concat_figure.grab()
    # concat(Z) × W_O (+ b_O) = A: one column unit (was three widths for the same d_model columns)
    fig, u = w.concat_figure, w.concat_figure.unit
    r = fig.rects
    H, T, dh = fig.Z.shape
    D = fig.A.shape[1]
    assert r["W_O"].width() == pytest.approx(D * u) and r["W_O"].height() == pytest.approx(H * dh * u)  # square
    assert r["A"].width() == pytest.approx(D * u) and r[f"Z{H - 1}"].right() - r["Z0"].left() == pytest.approx(D * u)
    assert "b_O" not in r or r["b_O"].width() == pytest.approx(D * u)
    assert r["labels"].right() <= r["Z0"].left()  # token names outside the matrices
    np.testing.assert_allclose(fig.A, w.form.out)
    # P V = Z: P's T × T cells square (within NEAR_SQUARE where that keeps its numbers or names every key), V's
    # and Z's columns equally wide
    from attnviz.gui.walkthrough.matrix_grid import NEAR_SQUARE

    p, v, z = (w.grids[n]._cells() for n in ("P", "V", "Z"))
    assert p[2] - 1e-9 <= p[1] <= NEAR_SQUARE * p[2] + 1e-9, ("P cells", p[1], p[2])
    assert v[1] == pytest.approx(z[1], rel=0.02) and v[0].width() == pytest.approx(z[0].width(), rel=0.02)  # to the px
    assert p[0].height() == pytest.approx(z[0].height())  # Z's rows are P's rows


def test_a_tt_map_with_numbers_keeps_square_cells(qtbot):
    """The rule behind P's square: with numbers (cells wider than a line) and without, rows as tall as columns
    are wide; control: a grid that is not a T×T map (no min_side) keeps its wide number cells."""
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    vals = np.full((6, 6), 0.125)
    shapes = {}
    for side in (180.0, 0.0):
        g = MatrixGrid("P")
        qtbot.addWidget(g)
        g.set_data(vals, title="P", kind="prob", row_labels=list("abcdef"), col_labels=list("abcdef"), min_side=side)
        g.resize(700, 420)
        g.show()
        qtbot.waitExposed(g)
        shapes[side] = g._cells()[1:] + (g.numbers_shown,)
    cw, ch, numbers = shapes[180.0]
    assert cw == pytest.approx(ch) and numbers  # room for it: exactly square, numbers kept
    cw0, ch0, _ = shapes[0.0]
    assert cw0 > ch0 * 1.2  # control: number cells are wider than tall


@pytest.mark.parametrize("H, dh, D", [(9, 4, 36), (32, 4, 128), (4, 16, 64)])
@pytest.mark.parametrize("style", ["default", "presentation"])
def test_head_outlines_leave_the_values_visible(qtbot, H, dh, D, style):
    """Each head's frame (the selected one's too) covers at most half a column of its Z's edge and well under a
    fifth of its width; at 32 heads in F5 the 3 and 7.5 px outlines covered most of every ~16 px Z."""
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure

    rng = np.random.default_rng(0)
    fig = ConcatFigure(PRESETS[style])
    qtbot.addWidget(fig)
    T = 12
    fig.set_data(rng.normal(size=(H, T, dh)), rng.normal(size=(H * dh, D)), rng.normal(size=(T, D)),
                 [f"t{i}" for i in range(T)], selected=1, query=3)
    fig.resize(1800, 800)
    fig.grab()
    thin, thick = fig.frame_widths()
    zw = fig.rects["Z0"].width()
    # a pen covers half its width inside the Z, on each side
    assert thick / 2 <= max(0.5, 0.5 * fig.unit) + 1e-9 and 2 * (thick / 2) <= 0.2 * zw + 1.0
    assert thin / 2 <= max(0.25, 0.2 * fig.unit) + 1e-9 and thin < thick
    assert thin >= 0.5 and thick >= 1.0  # still drawn
    # control: the style's own widths (what was drawn before) would cover past those bounds at 32 heads in F5
    if H == 32 and style == "presentation":
        lw = fig.style.line_width
        assert 3 * lw / 2 > 0.5 * fig.unit and 1.2 * lw / 2 > 0.2 * fig.unit


@pytest.mark.parametrize("presented", [False, True], ids=["docked", "F5"])
@pytest.mark.parametrize("heads", [4, 9, 32])
def test_the_overview_heads_row_is_drawn_to_scale(qtbot, heads, presented):
    """"overview: everything at once": its row of heads is the many-heads figure, by one column unit, as the
    "one head" part draws it (it was H grids and W_O and A each given a share of the row: Z_0, with its row labels
    inside its box, narrower than Z_1 …; W_O not square). At 4, 9 and 32 heads, docked (1280×720's dock) and F5."""
    from PySide6.QtWidgets import QApplication

    from attnviz.bench.traces import sample_trace

    trace = sample_trace("decoder", T=12, n_heads=heads, d_model={4: 16, 9: 36, 32: 64}[heads])
    w = matrix_form_shown(qtbot, trace, SIZES[1], style=PRESETS["presentation"] if presented else None)
    w.set_section("all")  # drawn at once (12 tokens: computed on the GUI thread)
    for _ in range(5):
        QApplication.processEvents()
    assert getattr(w, "concat_figure", None) is not None and w.concat_figure.Z.shape[0] == heads
    w.concat_figure.grab()
    fig, u = w.concat_figure, w.concat_figure.unit
    r = fig.rects
    H, T, dh = fig.Z.shape
    D = fig.A.shape[1]
    widths = [r[f"Z{h}"].width() for h in range(H)]
    assert max(widths) - min(widths) < 1e-6 and widths[0] == pytest.approx(dh * u)  # equal widths, equal columns
    assert r["W_O"].width() == pytest.approx(D * u) and r["W_O"].height() == pytest.approx(H * dh * u)
    assert r["A"].width() == pytest.approx(D * u)
    assert r["labels"].right() <= r["Z0"].left()  # label space outside the matrices
    assert not any(n.startswith("Z") and n[1:].isdigit() for n in w.grids)  # no second sizing rule
    np.testing.assert_allclose(fig.A, w.form.out)
    # no title over the next block (presented, the height-bound row drew "concat(Z)" over "W_O", "+ b_O 1 × 64"
    # over "=")
    from PySide6.QtGui import QFontMetricsF

    ft, fl, fo = (QFontMetricsF(f) for f in fig._fonts())
    assert r["W_O"].left() - r["Z0"].left() >= ft.horizontalAdvance("concat(Z)")
    bias = fl.horizontalAdvance(f"+ b_O  1 × {D}") if "b_O" in r else 0.0  # level with "=": left of it
    assert "b_O" in r or heads != 4  # (the sample models have biases)
    assert r["op1"].center().x() - fo.horizontalAdvance("=") / 2 - r["W_O"].left() >= bias
