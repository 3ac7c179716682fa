"""The matrix form of a 16,384-token input: a window of positions around the selected query, exact (each
row's softmax over every key), never a (T, T) array, and the window stated on screen."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnviz.selection import Selection  # noqa: E402
from tests.gui.long_layer_trace import long_layer_trace  # noqa: E402

T = 16_384


@pytest.fixture(scope="module")
def trace():
    return long_layer_trace(T, seed=1)


def exact_rows(trace, head: int, rows: slice) -> np.ndarray:
    """Independent recomputation: causal float64 softmax rows of (x W_Q + b)(x W_K + b)ᵀ over every key."""
    a = trace.arrays
    dh = trace.meta["d_head"]
    x = a["L0.x"].astype(np.float64)
    cols = slice(head * dh, (head + 1) * dh)
    q = x[rows] @ a["L0.W_q"][:, cols] + a["L0.b_q"][cols]
    k = x @ a["L0.W_k"][:, cols] + a["L0.b_k"][cols]
    s = q @ k.T * trace.meta["scale"]
    s[np.arange(T)[None, :] > np.arange(T)[rows][:, None]] = -np.inf
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_window_of_the_matrix_form_is_exact(trace):
    from attnviz.analysis.steps import compute_matrix_form

    a, b = 7000, 7128
    f = compute_matrix_form(trace, 0, window=(a, b))  # would raise if it read the mask or the map whole
    assert f.windowed and (f.rows, f.cols, f.n_queries, f.n_keys) == ((a, b), (a, b), T, T)
    assert f.P.shape == (2, 128, 128) and f.X.shape == (128, 16) and f.K.shape == (2, 128, 8)
    exact = exact_rows(trace, 1, slice(a, b))
    np.testing.assert_allclose(f.P[1], exact[:, a:b], atol=1e-9)
    assert f.max_error < 1e-5  # Z and A over every key equal the model's rows
    np.testing.assert_allclose(f.Z, trace.arrays["L0.z"][:, a:b], atol=1e-5)
    # negative control: a softmax of the window's columns alone is not the model's P
    m = f.masked[1]
    alone = np.exp(m - m.max(axis=1, keepdims=True))
    alone /= alone.sum(axis=1, keepdims=True)
    assert np.abs(alone - f.P[1]).max() > 1e-2
    assert np.isneginf(f.mask[0, 1:]).all() and f.mask[0, 0] == 0  # query a sees key a, not a + 1


def test_matrix_form_widget_shows_the_window_around_the_query(qtbot, trace):
    from attnviz.gui.walkthrough.matrix_form_widget import WINDOW_TOKENS, MatrixFormWidget

    sel = Selection()
    w = MatrixFormWidget(selection=sel)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    w.set_trace(trace)
    sel.update(layer=0, head=0, query=10_000)
    qtbot.waitUntil(lambda: w.form is not None and w.form.rows[0] == 10_000 - WINDOW_TOKENS // 2, timeout=120_000)
    a = 10_000 - WINDOW_TOKENS // 2
    assert w.grids["P"].values.shape == (WINDOW_TOKENS, WINDOW_TOKENS)
    assert w.grids["P"].row_labels[0] == f"w{a}" and w.grids["P"].col_labels[-1] == f"w{a + WINDOW_TOKENS - 1}"
    assert w.grids["P"].highlight_rows == {WINDOW_TOKENS // 2}  # the selected query, at its row of the window
    from PySide6.QtWidgets import QLabel

    texts = " ".join(label.text() for label in w.board.findChildren(QLabel))
    assert f"queries {a}–{a + WINDOW_TOKENS - 1} and keys {a}–{a + WINDOW_TOKENS - 1} of 16,384" in texts
