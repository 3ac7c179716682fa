"""The six steps and the matrix form of a 16,384-token input read the block input x a row block at a time,
the model's out only at the window's rows, hold no (heads, window, T) float64 scores at once, and return
arrays of the window's own (no view keeping a (T, ·) array alive while the window is on screen)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from attnviz.analysis.steps_inputs import PROJECT_ROWS
from attnviz.bench.on_demand_traces import WholeMapAsked
from tests.gui.long_layer_trace import long_layer_trace

T = 16_384
WINDOW = (7000, 7128)


class RowsOnly:
    """An array that refuses a read of more than ``most`` positions (along ``axis``) and a read whole."""

    def __init__(self, arr: np.ndarray, most: int, axis: int = 0):
        self.arr, self.most, self.axis = arr, most, axis
        self.shape, self.dtype, self.ndim = arr.shape, arr.dtype, arr.ndim

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        sel = idx[self.axis] if len(idx) > self.axis else slice(None)
        n = len(range(*sel.indices(self.shape[self.axis]))) if isinstance(sel, slice) else np.size(sel)
        if n > self.most:
            raise WholeMapAsked(f"{n} positions read at once (at most {self.most})")
        return self.arr[idx]

    def __array__(self, dtype=None, copy=None):
        raise WholeMapAsked("read whole")


@pytest.fixture(scope="module")
def trace():
    t = long_layer_trace(T, seed=2)
    t.arrays["L0.x"] = RowsOnly(t.arrays["L0.x"], PROJECT_ROWS)
    t.arrays["L0.out"] = RowsOnly(t.arrays["L0.out"], WINDOW[1] - WINDOW[0])
    t.arrays["L0.z"] = RowsOnly(t.arrays["L0.z"], WINDOW[1] - WINDOW[0], axis=1)
    return t


def test_the_guards_refuse_a_whole_read(trace):  # the guard the tests below rely on
    with pytest.raises(WholeMapAsked):
        np.asarray(trace["L0.x"], dtype=np.float64)
    with pytest.raises(WholeMapAsked):
        trace["L0.x"][:PROJECT_ROWS + 1]
    with pytest.raises(WholeMapAsked):
        trace["L0.z"][1, :]
    assert trace["L0.x"][:PROJECT_ROWS].shape == (PROJECT_ROWS, 16)


def _peak_and_kept(fn):
    """(result, peak bytes traced while ``fn`` ran, bytes still held with its result alive)."""
    tracemalloc.start()
    try:
        out = fn()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak, kept


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_the_matrix_form_of_a_window_holds_the_window(trace):
    from attnviz.analysis.steps import compute_matrix_form

    H = trace.n_heads
    one_scores = H * (WINDOW[1] - WINDOW[0]) * T * 8  # one (H, window, T) float64 array: 33.5 MB
    f, peak, kept = _peak_and_kept(lambda: compute_matrix_form(trace, 0, window=WINDOW))
    assert f.max_error < 1e-5 and f.rows == WINDOW
    assert peak < one_scores / 2, f"{peak / 2**20:.1f} MiB"  # before: several such arrays at once
    arrays = {n: v for n, v in vars(f).items() if isinstance(v, np.ndarray)}
    for name, v in arrays.items():  # the window's own arrays: nothing (T, ·) kept alive behind a view
        assert _owner(v).nbytes <= max(v.nbytes, 1 << 16) * 2, name
    assert kept < 4 * sum(v.nbytes for v in arrays.values()) + (1 << 20)
    # negative controls: the measurement sees one (H, window, T) float64 array; the check sees a view of x
    _, big, _ = _peak_and_kept(lambda: np.ones((H, WINDOW[1] - WINDOW[0], T)).sum())
    assert big >= one_scores / 2
    x_all = np.zeros((T, 16))
    assert _owner(x_all[7000:7128]).nbytes > 2 * x_all[7000:7128].nbytes


def test_the_six_steps_of_a_long_input_read_x_in_blocks_and_keep_the_window(trace):
    from attnviz.analysis.steps import compute_six_steps
    from attnviz.analysis.steps_window import STEP_KEYS, key_window

    query = 9000
    s, _, kept = _peak_and_kept(lambda: key_window(compute_six_steps(trace, 0, 1, query)))
    assert s.max_error < 1e-5 and s.max_weight_error < 1e-5 and len(s.key_tokens) == STEP_KEYS
    every_key = T * int(trace.description.d_head) * 8  # one (Tk, dh) float64 array of every key
    assert kept < every_key, f"{kept / 2**20:.2f} MiB"  # k, v, w·v of every key were views of the whole
    # negative control: the uncut steps do hold every key's arrays
    full, _, kept_full = _peak_and_kept(lambda: compute_six_steps(trace, 0, 1, query))
    assert kept_full > 3 * every_key
