"""The prediction panel's top entries equal a full stable sort, and a deferred per-token prediction is
shown from the selected row without computing the whole array."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.capture.trace import Trace
from attnviz.gui.panels.prediction_panel import PredictionPanel, top_entries


def _full_sort(p, k):
    return [int(i) for i in np.argsort(-np.asarray(p, np.float64), kind="stable")[:k]]


@pytest.mark.parametrize("seed", range(6))
def test_top_entries_equal_a_full_stable_sort_ties_included(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(3000)).astype(np.float32)
    p[rng.choice(3000, 40, replace=False)] = p.max()  # ties at the top
    p[rng.choice(3000, 500, replace=False)] = np.sort(p)[-12]  # many ties across the k-th value
    labels = [f"w{i}" for i in range(3000)]
    for k in (1, 5, 10, 12, 60, 2999, 3000, 4000):
        got = top_entries(p, labels, k)
        assert [i for i, _, _ in got] == _full_sort(p, k)
        assert [v for _, _, v in got] == [float(p[i]) for i in _full_sort(p, k)]


def test_top_entries_with_nan_fall_back_to_the_full_sort():
    p = np.array([0.1, np.nan, 0.5, 0.4])
    assert [i for i, _, _ in top_entries(p, list("abcd"), 2)] == _full_sort(p, 2)


class _Rows:
    """A deferred (T, V) array that counts what was computed."""

    def __init__(self, table):
        self.table, self.shape, self.rows, self.fulls = table, table.shape, [], 0

    def row(self, i):
        self.rows.append(i)
        return self.table[i]

    def full(self):
        self.fulls += 1
        return self.table


def test_panel_shows_the_selected_row_of_a_deferred_prediction(qtbot):
    rng = np.random.default_rng(1)
    table = rng.dirichlet(np.ones(50), size=4).astype(np.float32)
    pending = _Rows(table)
    trace = Trace(tokens=["[CLS]", "a", "b", "[SEP]"], meta={"kind": "encoder", "n_layers": 1, "n_heads": 1},
                  deferred={"prediction": pending})
    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.set_vocab([f"w{i}" for i in range(50)])
    panel.set_trace(trace)
    assert panel.mode == "per-token" and pending.rows == [0] and pending.fulls == 0
    assert panel.bars.entries == top_entries(table[0], [f"w{i}" for i in range(50)])
    panel.set_query(2)
    assert pending.rows == [0, 2] and pending.fulls == 0
    assert panel.bars.entries == top_entries(table[2], [f"w{i}" for i in range(50)])
    np.testing.assert_array_equal(trace["prediction"], table)  # asked whole: computed once, then kept
    assert pending.fulls == 1 and "prediction" in trace.arrays and not trace.deferred


def test_a_shown_panel_computes_a_deferred_row_on_a_worker_and_shows_the_newest(qtbot):
    import threading

    rng = np.random.default_rng(2)
    table = rng.dirichlet(np.ones(60), size=5).astype(np.float32)
    names = [f"w{i}" for i in range(60)]
    gate, threads = threading.Event(), []

    class _Slow(_Rows):
        def row(self, i):
            threads.append(threading.current_thread())
            gate.wait(5)
            return super().row(i)

    def trace_of(pending):
        return Trace(tokens=["[CLS]", "a", "b", "c", "[SEP]"], meta={"kind": "encoder", "n_layers": 1, "n_heads": 1},
                     deferred={"prediction": pending})

    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.set_vocab(names)
    panel.show()
    qtbot.waitExposed(panel)
    first = trace_of(_Slow(table))
    panel.set_trace(first)
    assert panel.background_pending and panel.bars.entries == []  # not computed on this thread
    panel.set_query(3)  # the user picks another token before the first row came: only the newest is shown
    gate.set()
    qtbot.waitUntil(lambda: not panel.background_pending, timeout=10000)
    assert threading.main_thread() not in threads
    assert panel.bars.entries == top_entries(table[3], names)
    assert "token 3" in panel.title.text() and first.deferred  # a row, never the whole (T, V) array
    panel.set_trace(trace_of(_Rows(table[::-1].copy())))
    qtbot.waitUntil(lambda: not panel.background_pending, timeout=10000)
    assert panel.bars.entries == top_entries(table[::-1][3], names)
    panel.clear()
    assert not panel.background_pending and panel.bars.entries == []


def test_rows_without_a_token_are_not_ranked_and_small_probabilities_are_not_zero():
    """A random model over a padded vocabulary ranked "[row N] 0.0%" rows (no text makes them); they are left
    out, a real token spelled like one is kept (control), and 0.004 % is printed as such, not "0.0%"."""
    from attnviz.gui.panels.prediction_panel import percent
    from attnviz.text.vocab_rows import no_token_label

    p = np.full(40, 1e-5)
    p[30:] = 0.05  # the padding rows are the most probable
    p[3], p[7] = 4e-5, 3e-5
    labels = [f"w{i}" for i in range(30)] + [no_token_label(i) for i in range(30, 40)]
    labels[5], p[5] = "[row 9]", 2e-5  # a token spelled like a padding label, at another row: a real token
    got = top_entries(p, labels, 5)
    assert [i for i, _, _ in got] == [3, 7, 5, 0, 1] and got[2][1] == "[row 9]"
    assert len(top_entries(p, labels, 100)) == 30  # never more than the rows that hold tokens
    assert [i for i, _, _ in top_entries(p, [f"w{i}" for i in range(40)], 2)] == [30, 31]  # control
    assert percent(4e-5) == "0.004%" and percent(0.5) == "50.0%" and percent(0.0) == "0.0%"


@pytest.mark.parametrize("trace_model, named", [("smol", True), ("another", False)])
def test_the_loaded_vocabulary_names_only_its_own_models_predictions(qtbot, trace_model, named):
    """A saved trace of another model with a vocabulary of the same size is not named in the loaded model's
    words (its IDs are shown, and Step cannot append one); the loaded model's own trace is (the control)."""
    p = np.zeros(50, np.float32)
    p[7] = 1.0
    trace = Trace(tokens=["a", "b"], arrays={"prediction": p},
                  meta={"kind": "decoder", "n_layers": 1, "n_heads": 1, "model_name": trace_model})
    panel = PredictionPanel()
    qtbot.addWidget(panel)
    panel.set_vocab([f"w{i}" for i in range(50)], "smol")
    panel.set_trace(trace)
    assert panel.bars.entries[0][:2] == ((7, "w7") if named else (7, "7"))
    assert (panel.chosen_token() == "w7") is named and panel.step_button.isEnabled() is named
