"""On-demand probabilities read only the q and k rows a block needs.

A long trace's q and k are memory-mapped from its spill file: every page read stays resident (counted in the
process's RSS). The walkthrough's opening rule asks 64 sample rows of every layer; before, the error bound's
row norms read the whole of q (9 heads × T rows × 30 layers, ~570 MiB at 8,190 tokens). The arrays here
record which positions are read and refuse a whole read; the numbers must equal those from plain arrays.
"""

import numpy as np
import pytest

from attnviz.capture.on_demand import OnDemandProbs, ScoreRule, row_lse

H, HKV, T, DH = 6, 2, 5000, 8


class Recorded:
    """An (heads, T, dh) array that records the positions (axis 1) each read touches; refuses a whole read."""

    def __init__(self, arr: np.ndarray):
        self.arr, self.shape, self.dtype, self.ndim = arr, arr.shape, arr.dtype, arr.ndim
        self.read = np.zeros(arr.shape[1], bool)

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        sel = idx[1] if len(idx) > 1 else slice(None)
        self.read[np.arange(self.shape[1])[sel].reshape(-1)] = True
        return self.arr[idx]

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("read whole")


@pytest.fixture(scope="module")
def layer():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(H, T, DH)).astype(np.float32)
    k = rng.normal(size=(HKV, T, DH)).astype(np.float32)
    rule = ScoreRule(scale=DH ** -0.5, causal=True)
    return q, k, row_lse(q, k, rule), rule


SAMPLE = np.unique(np.linspace(0, T - 1, 64).astype(int))  # as the walkthrough's opening rule samples rows


def test_sample_rows_read_only_those_query_rows(layer):
    q, k, lse, rule = layer
    rq, rk = Recorded(q), Recorded(k)
    got = OnDemandProbs(rq, rk, lse, rule).block(rows=SAMPLE)
    np.testing.assert_array_equal(got, OnDemandProbs(q, k, lse, rule).block(rows=SAMPLE))
    assert np.flatnonzero(rq.read).tolist() == SAMPLE.tolist()
    assert rk.read[:SAMPLE[-1] + 1].all()  # full rows: every key up to the last row (causal) is needed


def test_a_tile_reads_only_its_rows_and_nearby_keys(layer):
    q, k, lse, rule = layer
    rq, rk = Recorded(q), Recorded(k)
    got = OnDemandProbs(rq, rk, lse, rule).block(rows=slice(4000, 4100), cols=slice(3000, 3100))
    np.testing.assert_array_equal(got, OnDemandProbs(q, k, lse, rule).block(rows=slice(4000, 4100),
                                                                            cols=slice(3000, 3100)))
    assert np.flatnonzero(rq.read).tolist() == list(range(4000, 4100))
    assert rk.read.sum() <= 2 * 1024  # the norms' pieces around the tile's keys, never all 5,000


def test_control_the_recorder_sees_a_whole_read(layer):
    q, k, lse, rule = layer
    rq, rk = Recorded(q), Recorded(k)
    OnDemandProbs(rq, rk, lse, rule).block(rows=slice(None), cols=slice(0, 10))
    assert rq.read.all()  # every row asked: every row read
    with pytest.raises(AssertionError, match="read whole"):
        np.asarray(rq)
