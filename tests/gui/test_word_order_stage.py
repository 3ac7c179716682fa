"""The live lesson's scene 12 (word order) uses the stage (issue 36): its two 2 × 10 strips, square-celled, were
bound by half the width and took the top third of a 1920×1080 stage with ~40 % of it blank under them. Measured
on the laid-out figure: the strips' cells cover a good share of the canvas's height, and nothing but a small gap
separates them from the notes; the notes' signed numbers carry a real minus sign ("−0.183", not "-0.183")."""

from __future__ import annotations

import re

import pytest
from test_lesson_word_order import PAGES, _page, word_order_scene  # noqa: F401 - the fixture, shared

HYPHEN_NUMBER = re.compile(r"(?<![\w.])-\d")  # "-0.183": a hyphen where a minus sign belongs


def stage_use(view) -> tuple[float, float]:
    """(the strips' cell height, the blank between the strips' cells and the notes) as shares of the canvas."""
    canvas_h = view.canvas.viewport().height()
    cells = [m.image.sceneBoundingRect() for m in view.maps if m.isVisible()]
    cells_h = max(r.height() for r in cells)
    bars = [m.bar.sceneBoundingRect().bottom() for m in view.maps if m.isVisible() and m.bar.isVisible()]
    lowest = max([r.bottom() for r in cells] + bars)
    blank = view.notes.item.sceneBoundingRect().top() - lowest
    return cells_h / canvas_h, blank / canvas_h


@pytest.mark.parametrize("page_size", list(PAGES), ids=list(PAGES))
def test_the_strips_use_the_stage(word_order_scene, qtbot, page_size):  # noqa: F811 - the fixture
    size, lines = PAGES[page_size]
    _page_widget, view, _selection, _panels = _page(word_order_scene, qtbot, size, lines)
    cells, blank = stage_use(view)
    # square cells: the strips' two rows were 13 % of the 1920×1080 stage's height (11 % at 1280×720); now 44 % (36 %)
    assert cells >= 0.3, (cells, blank)
    assert blank <= 0.08, (cells, blank)


def test_the_measure_sees_a_strip_in_the_top_third(word_order_scene, qtbot):  # noqa: F811 - the fixture
    """Negative control: the same strips held to square cells (as before) are reported as not using the stage."""
    from attnviz.gui.views.lesson_views import WordOrderView

    WordOrderView.square_cells = True
    try:
        _page_widget, view, _selection, _panels = _page(word_order_scene, qtbot, *PAGES["1920x1080"])
        cells, blank = stage_use(view)
    finally:
        WordOrderView.square_cells = False
    assert cells < 0.3 or blank > 0.08, (cells, blank)


def test_signed_notes_use_a_minus_sign(word_order_scene):  # noqa: F811 - the fixture
    _, (_, _, _, panels) = word_order_scene
    found = [n for n in panels.notes if HYPHEN_NUMBER.search(n)]
    assert not found, found
    from attnviz.lessons.figure_data import signed

    assert any("changes most at" in n and re.search(r"\([−+]\d", n) for n in panels.notes), panels.notes
    assert signed(-0.1834) == "\u22120.183" and signed(0.044) == "+0.044"
    assert HYPHEN_NUMBER.search("at 0 [CLS] (-0.183; largest") and not HYPHEN_NUMBER.search("order-sentiment")
