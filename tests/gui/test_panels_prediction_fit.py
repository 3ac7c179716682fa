"""The Prediction panel in a short dock (a 1280×720 window): whole rows, a '… more' line, the Step button on
screen. Before, the bars' minimum was every row: the dock cut the last row in half (translate at 1280×720:
'grano 0.032%' halved) and, for a decoder, the Step button below it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from attnviz.gui.panels.prediction_panel import PredictionPanel, ProbabilityBars

ENTRIES = [(i, f"token{i}", 0.5 / (i + 1)) for i in range(10)]


def _panel(qtbot, height: int) -> PredictionPanel:
    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.title.setText("Next token (top 10)")
    panel.bars.set_entries(ENTRIES, 0)
    panel.step_button.show()
    panel.resize(240, height)
    panel.show()
    qtbot.waitExposed(panel)
    QApplication.processEvents()
    return panel


def _inside(panel, widget) -> bool:
    top = widget.mapTo(panel, widget.rect().topLeft()).y()
    return top >= 0 and top + widget.height() <= panel.height()


def test_a_short_panel_draws_whole_rows_says_how_many_more_and_keeps_step(qtbot, monkeypatch):
    monkeypatch.setattr(ProbabilityBars, "screen_height", lambda self: 720, raising=False)  # a 1280×720 screen
    probe = _panel(qtbot, 600)
    every_row = probe.sizeHint().height()  # the height that draws all ten
    shortest = probe.minimumSizeHint().height()  # as short as a dock can make it
    assert shortest < every_row  # the dock may be shorter than every row 
    panel = _panel(qtbot, shortest)
    bars = panel.bars
    assert _inside(panel, bars) and _inside(panel, panel.step_button)
    shown = bars.rows_shown()
    assert 0 < shown < len(ENTRIES)
    assert (shown + 1) * bars._row_h() + 4 <= bars.height()  # the drawn rows and the '… more' line fit whole
    assert bars.more_text() == f"… {len(ENTRIES) - shown} more (make this panel taller)"


def test_the_bars_claim_every_row_on_a_1080_screen_and_fewer_on_a_720_one():
    from attnviz.gui.panels.prediction_panel import MIN_ROWS, min_rows

    assert min_rows(10, 1080, 20) == 10  # 1920×1080: the dock keeps all ten, as before
    assert MIN_ROWS <= min_rows(10, 720, 20) < 10
    assert min_rows(10, 200, 20) == MIN_ROWS and min_rows(0, 720, 20) == 1


def test_a_tall_panel_draws_every_row_and_no_more_line(qtbot):  # the negative control
    panel = _panel(qtbot, 600)
    assert panel.bars.rows_shown() == len(ENTRIES)
    assert panel.bars.more_text() == ""
    assert _inside(panel, panel.step_button)
