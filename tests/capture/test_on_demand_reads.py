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


_RSS_SCRIPT = r"""
import sys, numpy as np
from attnviz.capture.on_demand import OnDemandProbs, ScoreRule

def rss_file():
    for line in open("/proc/self/status"):
        if line.startswith("RssFile:"):
            return int(line.split()[1]) * 1024

H, HKV, T, DH = 9, 3, 16384, 64
rng = np.random.default_rng(0)
rule = ScoreRule(scale=DH ** -0.5, causal=True)
for name, shape in (("q", (H, T, DH)), ("k", (HKV, T, DH)), ("w", (H, T, DH))):
    a = np.lib.format.open_memmap(f"{sys.argv[1]}/{name}.npy", mode="w+", dtype=np.float32, shape=shape)
    a[:] = rng.standard_normal(shape, dtype=np.float32)
    a.flush()
    del a
q, k, w = (np.load(f"{sys.argv[1]}/{n}.npy", mmap_mode="r") for n in "qkw")
rows = np.unique(np.linspace(0, T - 1, 64).astype(int))
OnDemandProbs(w, k, np.zeros((H, T), np.float32), rule).block(rows=rows[:2], cols=slice(0, 8))  # warm up k's pages
before = rss_file()
got = OnDemandProbs(q, k[:, :], np.zeros((H, T), np.float32), rule).block(rows=rows, cols=slice(0, 8))
after = rss_file()
control = np.asarray(q[np.arange(H)[:, None], rows[None, :]])  # the same rows through the map
mapped = rss_file()
want = OnDemandProbs(np.load(f"{sys.argv[1]}/q.npy"), np.load(f"{sys.argv[1]}/k.npy"), np.zeros((H, T), np.float32),
                     rule).block(rows=rows, cols=slice(0, 8))
print(after - before, mapped - after, int(np.array_equal(got, want)))
"""


def test_a_mapped_trace_is_read_from_its_file_not_its_map(tmp_path):
    """64 sample rows of a 16,384-token memory-mapped q leave no page of it resident (RssFile, a fresh process);
    the control reads the same rows through the map: at least one 4 KiB page per row is resident after."""
    import os
    import subprocess
    import sys

    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc (Linux)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                         env=env, timeout=300, check=True).stdout.split()
    by_file, by_map, equal = (int(x) for x in out)
    assert equal == 1  # the same numbers as from arrays in memory
    assert by_map >= 64 * 9 * 4096  # the control: the map keeps the pages it touched
    assert by_file < 512 * 1024, f"{by_file / 2**20:.1f} MiB of q resident after the block"


@pytest.mark.parametrize("preadv", [True, False])
def test_rows_read_from_the_file_equal_the_array(tmp_path, monkeypatch, preadv):
    import os

    from attnviz.capture.file_rows import Rows

    if not preadv:
        monkeypatch.delattr(os, "preadv", raising=False)  # a build without it reads with pread
    arr = np.random.default_rng(1).standard_normal((3, 500, 8)).astype(np.float32)
    np.save(tmp_path / "a.npy", arr)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    for view, want in ((mapped, arr), (mapped[1:], arr[1:])):  # a view of the map reads from its own place
        rows = Rows(view)
        assert rows._file is not None
        for heads, idx in (([0], np.arange(10, 60)), ([1, 0], np.array([0, 3, 4, 5, 499])), ([1], np.array([7]))):
            np.testing.assert_array_equal(rows.block(heads, idx), want[heads][:, idx])
        np.testing.assert_array_equal(rows.rows(1, np.arange(100, 200)), want[1, 100:200])
    gone = Rows(mapped)
    os.remove(tmp_path / "a.npy")  # the spill folder removed: the map still reads (control: same numbers)
    np.testing.assert_array_equal(gone.block([2], np.array([1, 2, 9])), arr[2][[1, 2, 9]][None])
    assert gone._file is None


def test_positions_read_from_the_file_equal_the_slice(tmp_path):
    from attnviz.capture.file_rows import positions

    rng = np.random.default_rng(2)
    for name, arr in (("x", rng.standard_normal((300, 12)).astype(np.float32)),
                      ("z", rng.standard_normal((3, 300, 4)).astype(np.float32))):
        np.save(tmp_path / f"{name}.npy", arr)
        mapped = np.load(tmp_path / f"{name}.npy", mmap_mode="r")
        for a, b in ((0, 300), (17, 42), (290, 400)):
            want = arr[a:b] if arr.ndim == 2 else arr[:, a:b]
            np.testing.assert_array_equal(positions(mapped, a, b), want)
            np.testing.assert_array_equal(positions(arr, a, b), want)  # the control: an array in memory
