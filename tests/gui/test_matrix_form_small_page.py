"""Walkthrough figures of 21–24 tokens on pages smaller than 1920×1080 (issue 36, Deliver 4): every row they draw
named, at 12 px on the page.

Two bands of 24 rows and three T×T maps do not fit a 720-line page at 12 px: the matrix form and Z = P V kept the
1920×1080 slide's floor there (~8.7 px row labels on a 1280×720 page, 11.6 px on 1600×1200), step 1 of the steps
(K and V under a row of biases) 8.9 px. Now the matrix form's one-head parts show the positions around the selected
query that the page names at 12 px and say so; step 1 puts the biases on x_i's line. Measured from what the export
paints (``render_image``): each grid's row-label stride and its letters' ink, in page pixels (the 12-px type floor
inked 9.6 px on a 1280×720 page; a 1920×1080 page now names the 16 positions around the query at 12 px of ink, where
it drew all 24 in 8–10-px letters).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

TEXT = "the animal did not cross the street because it was too tired and the dog did not cross the road because it was"
QUERY = 9  # "it"
SMALL = [(1280, 720), (1200, 1200), (1600, 1200)]


@pytest.fixture(scope="module")
def trace24():
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, run_trace

    if "coref" not in bundled_models():
        pytest.skip("the bundled models are not built (make assets)")
    trace = run_trace(load_model("coref", device="cpu"), text=TEXT)
    assert len(trace.tokens) == 24
    return trace


@pytest.fixture(scope="module")
def figures(qapp, trace24):
    from attnviz.figures.registry import goto_step, make_figure
    from attnviz.selection import SelectionState

    built = {}
    for name in ("matrix-form", "matrix-z", "steps"):
        view, _selection = make_figure(name, trace24, SelectionState(layer=1, head=3, query=QUERY))
        if name == "steps":
            goto_step(view, name, 1)
        built[name] = view
    yield built
    for view in built.values():
        view.close()
        view.deleteLater()


def _painted(view, w: int, h: int, monkeypatch) -> list[tuple]:
    """Export ``view`` on a w × h page; return its grids with row labels as the export laid them out to paint them
    (within render_figure's ``page_layout``): (title, rows, row labels, stride, the labels' ink in page px)."""
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    from layout_audit import ink_px
    from page_measure import measured_export

    def measure(fig, scale: float) -> list[tuple]:
        return [(g.title, g.values.shape[0], list(g.row_labels), g.row_label_stride(),
                 ink_px(g.row_label_font(), scale)) for g in fig.findChildren(MatrixGrid)
                if g.isVisibleTo(fig) and g.values.size and g.row_labels]

    grids = measured_export(view, w, h, monkeypatch, measure)
    assert grids, "no grid with row labels was laid out"
    return grids


def _problems(view, w: int, h: int, monkeypatch) -> list[str]:
    grids = _painted(view, w, h, monkeypatch)
    out = [f"{w}×{h}: {title} names every {k}th of {rows} rows" for title, rows, _l, k, _px in grids if k > 1]
    return out + [f"{w}×{h}: {title}'s row labels ink {px:.1f} px" for title, _r, _l, _k, px in grids if px < 12 - 0.05]


# known gap (issue 36, Deliver 4): step 1 has no window of positions to fall back on; its 24 key rows do not fit a
# 720-line page at 12 px of ink, so it is laid out at the 1920×1080 slide's floor: 10.6 px of ink (the same page as
# at the 12-px type floor). Strict: it fails once step 1 holds the floor, so the mark comes off then.
STEPS_720 = pytest.mark.xfail(strict=True, reason="steps at 1280x720: K and V rows ink 10.6 px (slide floor)")


@pytest.mark.parametrize("name", ["matrix-form", "matrix-z", "steps"])
@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_row_named_at_12px_on_a_small_page(figures, name, size, monkeypatch, request):
    if name == "steps" and size == (1280, 720):
        request.applymarker(STEPS_720)
    assert _problems(figures[name], *size, monkeypatch) == []


def test_a_small_page_says_which_rows_it_shows(figures, trace24):
    """The 1280×720 page shows consecutive positions around the query (its row among them) and its note says which;
    the screen shows every row again after the export."""
    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QLabel

    from attnviz.figures.render import layout_scale
    from attnviz.gui.walkthrough.figure import page_layout

    view = figures["matrix-form"]
    tokens = [str(t) for t in trace24.tokens]
    scale = layout_scale(1280, 720)
    with page_layout(view, view.figure_widget, QSize(int(1280 / scale), int(720 / scale)), scale):
        a, b = view.form.rows
        shown = view.grids["P"].row_labels
        notes = [getattr(label, "plain_text", label.text()) for label in view.board.findChildren(QLabel)
                 if not label.isHidden()]
    assert 8 <= b - a < 24 and a <= QUERY < b and shown == tokens[a:b], (a, b, shown)
    assert any(f"this page names {b - a} of the 24 rows: queries {a}–{b - 1}" in n for n in notes), notes
    assert view.page_rows is None and not view.form.windowed and view.grids["P"].values.shape == (24, 24)
    assert not any("this page names" in label.text() for label in view.board.findChildren(QLabel)
                   if not label.isHidden())  # (the rows cleared wait hidden for their deletion)


def test_a_1920x1080_page_names_most_rows_at_12_px_of_ink(figures, monkeypatch):
    """A slide names at least two thirds of the 24 rows, each one, in letters 12 px tall (at 12-px type it drew all 24
    in 8–10-px letters: the ink floor takes the room of 8 rows)."""
    assert _problems(figures["matrix-form"], 1920, 1080, monkeypatch) == []
    grids = _painted(figures["matrix-form"], 1920, 1080, monkeypatch)
    assert min(rows for _t, rows, _l, _k, _px in grids) >= 16


def test_without_the_window_a_small_page_draws_small_labels(figures, monkeypatch):
    """Negative control: no window to fall back on (the matrix form as it was): the 1280×720 page's rows are under
    12 px again."""
    import attnviz.gui.walkthrough.matrix_form_widget as mfw

    monkeypatch.setattr(mfw, "PAGE_ROWS", ())
    assert any("px" in p for p in _problems(figures["matrix-form"], 1280, 720, monkeypatch))
