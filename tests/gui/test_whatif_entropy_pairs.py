"""What if at 1280×720 (issue 36): the predictions' and the entropies' grids come in pairs of one shape, and each
pair's two grids are drawn alike. In a ~600 px figure the four in one line squeezed "entropy" (its title is short,
so it asked for less) below its numbers while its twin "entropy, switched" showed them; the pairs now stack when
narrow and sit side by side when wide."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from walkthrough_fixtures import TEXT, gqa_decoder, show_widget  # noqa: E402,F401

from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.walkthrough import WhatIfPanel, sync_runner  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402


def _panel(qtbot, model, size):
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner), size=size)
    panel.set_model(load_model(model, device="cpu"))
    panel.set_input(text=TEXT)
    panel.rerun()
    # every posted layout pass run (a 50 ms wait ended before them on a loaded machine: the grids still had their
    # first sizes and "entropy" showed no numbers, on main too)
    for _ in range(10):
        QApplication.processEvents()
    return panel


def test_in_a_narrow_figure_both_entropy_grids_show_their_numbers(qtbot):
    # a ~600 px figure: a page narrower than a 1280×720 window's (whose switches now stand above the figure)
    panel = _panel(qtbot, "coref", (690, 620))
    before, after = panel.grids["H_before"], panel.grids["H_after"]
    assert 500 < panel.board.width() < 700
    assert after.numbers_shown and before.numbers_shown
    assert abs(before.width() - after.width()) <= 1  # one shape, one width
    tops = panel.grids["top_before"], panel.grids["top_after"]
    assert abs(tops[0].width() - tops[1].width()) <= 1
    assert panel.first_row.wrapped  # the entropies under the predictions
    assert before.mapTo(panel.board, before.rect().topLeft()).y() > tops[0].mapTo(panel.board, tops[0].rect().bottomLeft()).y()


def test_in_a_wide_figure_the_four_share_one_line(qtbot):
    """The control: with room for all four, nothing wraps and the numbers still show."""
    panel = _panel(qtbot, "coref", (1800, 900))
    assert not panel.first_row.wrapped
    before, after = panel.grids["H_before"], panel.grids["H_after"]
    assert before.numbers_shown and after.numbers_shown
    assert before.mapTo(panel.board, before.rect().topLeft()).y() == after.mapTo(panel.board, after.rect().topLeft()).y()
