"""Two labels that said more than was measured: a NaN model's prediction panel showed "nan%" bars (now a
notice), and the Data set view called the repeat pattern of a model scored without the random-sequence probe
"induction score" (now rep-ind). Each with its negative control."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402


def _panel(qtbot, trace):
    from attnviz.gui.panels.prediction_panel import PredictionPanel

    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.set_trace(trace)
    return panel


def test_a_nan_prediction_shows_a_notice_not_nan_percent(qtbot):
    trace = sample_trace("decoder", T=6)
    trace.arrays["prediction"] = np.full_like(trace["prediction"], np.nan)
    panel = _panel(qtbot, trace)
    assert "not a number" in panel.title.text() and "\n" not in panel.title.text()
    assert panel.bars.entries == [] and not panel.step_button.isVisibleTo(panel)
    good = _panel(qtbot, sample_trace("decoder", T=6))  # negative control: a finite distribution has its bars
    assert len(good.bars.entries) == 10 and all(np.isfinite(p) for _, _, p in good.bars.entries)
    assert "not a number" not in good.title.text()


def test_class_probabilities_of_a_nan_model_show_the_notice(qtbot):
    trace = sample_trace("vit")
    assert trace["prediction"].ndim == 1
    trace.arrays["prediction"] = np.full_like(trace["prediction"], np.nan)
    panel = _panel(qtbot, trace)
    assert panel.title.text().startswith("Class probabilities: ") and "not a number" in panel.title.text()
    assert panel.bars.entries == []


def test_the_data_set_view_names_rep_ind_when_no_probe_ran(qtbot):
    from attnviz.gui.views.dataset_view import DatasetView
    from attnviz.runtime.batch_scores import score_trace
    from attnviz.selection import Selection

    trace = sample_trace("decoder", T=12)
    trace.tokens = ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c"]
    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    result = score_trace(trace)  # one input, no repeated-random-sequence probe
    view.result = result
    view.score_box.setCurrentIndex(view.score_box.findData("induction"))
    view._draw()
    i = view.score_box.findData("induction")
    assert view.score_box.itemText(i) == "repeat-induction pattern (rep-ind)"
    from attnviz.analysis.head_scores import SCORES

    header = view.table.horizontalHeaderItem(3 + SCORES.index("induction"))
    assert header.text() == "rep-ind"
    # negative control: a result measured on the probe keeps the induction score's name
    result.meta["n_repeated"] = 200
    view._draw()
    assert view.score_box.itemText(i) == "induction score" and header.text() == "induct"
