"""The walkthrough of a 16,384-token input: exact numbers for a window of keys around the query, never a
(T, T) array (the trace's probabilities and mask raise when asked for whole), and the window stated."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnviz.bench.on_demand_traces import WholeMapAsked  # noqa: E402
from attnviz.selection import Selection  # noqa: E402
from tests.gui.long_layer_trace import long_layer_trace  # noqa: E402

T = 16_384


@pytest.fixture(scope="module")
def trace():
    return long_layer_trace(T)


def exact_row(trace, head: int, query: int) -> np.ndarray:
    """Independent recomputation: a causal float64 softmax of (x W_Q + b)·(x W_K + b)ᵀ over every key."""
    a = trace.arrays
    dh = trace.meta["d_head"]
    x = a["L0.x"].astype(np.float64)
    cols = slice(head * dh, (head + 1) * dh)
    q = x[query] @ a["L0.W_q"][:, cols] + a["L0.b_q"][cols]
    k = x @ a["L0.W_k"][:, cols] + a["L0.b_k"][cols]
    s = k @ q * trace.meta["scale"]
    s[query + 1:] = -np.inf
    e = np.exp(s - s.max())
    return e / e.sum()


def test_the_whole_mask_is_refused(trace):  # the guard the tests below rely on
    with pytest.raises(WholeMapAsked):
        trace["L0.mask"]
    with pytest.raises(WholeMapAsked):
        trace["L0.probs"]


def test_six_steps_of_a_long_input_show_a_window_of_exact_weights(trace):
    from attnviz.analysis.steps import compute_six_steps
    from attnviz.analysis.steps_window import STEP_KEYS, key_window

    query = 9000
    full = compute_six_steps(trace, 0, 1, query)  # one mask row, never the (T, T) mask
    assert full.max_error < 1e-5 and full.max_weight_error < 1e-5
    steps = key_window(full)
    a = steps.key_offset
    assert (a, steps.n_keys, len(steps.key_tokens)) == (query - STEP_KEYS // 2, T, STEP_KEYS)
    assert steps.key_tokens[0] == f"w{a}" and steps.k.shape == (STEP_KEYS, 8)
    exact = exact_row(trace, 1, query)
    np.testing.assert_allclose(steps.weights, exact[a:a + STEP_KEYS], atol=1e-9)
    # the softmax ran over all keys, not the window's: the window's weights do not sum to 1
    assert steps.weights.sum() < 0.5
    window_softmax = np.exp(steps.masked - steps.masked.max())
    window_softmax /= window_softmax.sum()
    assert np.abs(window_softmax - steps.weights).max() > 1e-3  # negative control: a softmax of the window alone
    assert np.isneginf(steps.mask[query - a + 1:]).all() and np.isfinite(steps.mask[:query - a + 1]).all()


def test_walkthrough_widget_states_its_window(qtbot, trace):
    from attnviz.gui.walkthrough.walkthrough_widget import STRIP_TOKENS, WalkthroughWidget

    sel = Selection()
    w = WalkthroughWidget(selection=sel)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    w.set_trace(trace)
    sel.update(layer=0, head=0, query=12_000, key=11_990)
    w._forcing = True
    w._update()
    s = w.steps
    assert s is not None and s.n_keys == T and s.key_offset == 12_000 - 32
    assert w.tokens.offset == 12_000 - 8 and len(w.tokens.tokens) == STRIP_TOKENS and w.tokens.query == 8
    assert f"positions {12_000 - 8}–{12_000 - 8 + STRIP_TOKENS - 1} of" in w.tokens.caption and "16,384" in w.tokens.caption
    w.set_step(w.step_list.index("softmax"))
    texts = " ".join(getattr(item, "text", lambda: "")() if callable(getattr(item, "text", None)) else ""
                     for item in w.board.findChildren(object))
    assert "of 16,384 (around the query) are shown" in texts
    # the key of the worked example is the selected position, drawn at its row of the window
    grid = w.grids["weights"]
    assert grid.values.shape[0] == 64
    np.testing.assert_allclose(grid.values[:, 0], exact_row(trace, 0, 12_000)[s.key_offset:s.key_offset + 64],
                               atol=1e-9)
    # a click on a chip of the strip picks that position of the input, not of the window
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    box = w.tokens._layout(w.tokens.width())[3]
    QTest.mouseClick(w.tokens, Qt.MouseButton.LeftButton, pos=box.center().toPoint())
    assert sel.state.query == 12_000 - 8 + 3
