"""Many heads, one output drawn to scale (issue 36 finding 4, 11; issue 37 item 5): one column unit in
every matrix, labels outside the matrices, W_O with its true aspect, every head whole at 2, 9 and 32 heads,
each head's pattern above its Z. Measured from where the figure draws each part (``ConcatFigure.rects``)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHAPES = [(2, 32, 64, 21), (9, 64, 576, 12), (32, 64, 2048, 12), (32, 8, 256, 24)]  # H, d_head, d_model, T


def _figure(qtbot, H, dh, D, T, size=(1067, 600), bias=True):
    from attnviz.gui.walkthrough.concat_figure import ConcatFigure

    rng = np.random.default_rng(0)
    fig = ConcatFigure()
    qtbot.addWidget(fig)
    P = rng.random((H, T, T))
    fig.set_data(rng.normal(size=(H, T, dh)), rng.normal(size=(H * dh, D)), rng.normal(size=(T, D)),
                 [f"tok{i}" for i in range(T)], P=P / P.sum(-1, keepdims=True),
                 b_O=rng.normal(size=D) if bias else None, selected=1, query=3)
    fig.resize(*size)
    fig.grab()  # paint once: rects are what was drawn
    return fig


@pytest.mark.parametrize("H, dh, D, T", SHAPES)
def test_every_matrix_shares_one_column_unit(qtbot, H, dh, D, T):
    fig = _figure(qtbot, H, dh, D, T)
    r, u = fig.rects, fig.unit
    widths = [r[f"Z{h}"].width() for h in range(H)]
    assert max(widths) - min(widths) < 1e-9 and widths[0] == pytest.approx(dh * u)  # equal widths, d_head units
    assert r["W_O"].width() == pytest.approx(D * u) and r["W_O"].height() == pytest.approx(H * dh * u)
    assert r["A"].width() == pytest.approx(D * u) and r["b_O"].width() == pytest.approx(D * u)
    # concatenated: the Z_h touch and together are as wide as W_O is tall
    assert r[f"Z{H - 1}"].right() - r["Z0"].left() == pytest.approx(r["W_O"].height())
    assert r["Z0"].height() == pytest.approx(r["A"].height())  # the same token rows
    # the labels stand outside the matrices; every part is inside the figure
    assert r["labels"].right() <= r["Z0"].left()
    for name, rect in r.items():
        assert rect.left() >= 0 and rect.right() <= fig.width() + 1e-6, name
        assert rect.top() >= 0 and rect.bottom() <= fig.height() + 1e-6, name
    # every head's pattern, equally sized, inside its Z's column (at 32 heads a Z is ~10 px wide on this
    # 1067-px layout: a 1-px-per-cell pattern would be a smear, so none is drawn rather than 32 smears)
    assert ("P0" in r) == (H <= 9)
    for h in range(H if "P0" in r else 0):
        p = r[f"P{h}"]
        assert p.width() == pytest.approx(r["P0"].width()) and p.height() == pytest.approx(r["P0"].height())
        assert r[f"Z{h}"].left() - 1e-6 <= p.left() and p.right() <= r[f"Z{h}"].right() + 1e-6
        assert p.width() / T == pytest.approx(p.height() / T)  # square cells (T queries × T keys)


@pytest.mark.parametrize("H, dh, D, T", SHAPES)
def test_every_row_named_up_to_24_rows(qtbot, H, dh, D, T):
    from PySide6.QtGui import QFontMetricsF

    fig = _figure(qtbot, H, dh, D, T)
    line = QFontMetricsF(fig._fonts()[1]).height()
    assert fig.row_px >= 0.8 * line  # a line of label text per token row (none thinned away)


def test_many_heads_figure_uses_the_to_scale_drawing(qtbot):
    """The export/lesson figure ``many-heads`` draws its heads part with ConcatFigure, from the trace."""
    from attnviz.figures.registry import make_figure
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    if "induction" not in bundled_models():
        pytest.skip("the bundled models are not built (make assets)")
    trace = run_trace(load_model("induction", device="cpu"), text="blackhorseblackhorse")
    view, _sel = make_figure("many-heads", trace, SelectionState(layer=0, head=1, query=5), None, None)
    try:
        fig = view.concat_figure
        H, dh = trace.n_heads, trace.meta["d_head"]
        assert fig.Z.shape == (H, len(trace.tokens), dh) and fig.selected == 1 and fig.query == 5
        np.testing.assert_allclose(fig.P, np.asarray(trace["L0.probs"], np.float64), atol=1e-6)
        np.testing.assert_allclose(fig.A, np.asarray(trace["L0.out"], np.float64), atol=1e-5)
    finally:
        view.close()
        view.deleteLater()
