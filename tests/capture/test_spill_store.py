"""SpillStore on its own (no model): the memory budget, read-only maps equal to what was written, the NaN check
done while an array is still in memory, a stream copied in, the folder removed on close."""

from __future__ import annotations

import io
import os

import numpy as np

from attnviz.capture.finite import nonfinite_arrays
from attnviz.capture.spill import SpillStore


def test_budget_keeps_the_first_arrays_in_memory_then_spills():
    store = SpillStore(budget=3000, min_bytes=100)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(250).astype(np.float32) for _ in range(3))  # 1,000 bytes each
    tiny = np.arange(5, dtype=np.float32)
    held = store.keep({"a": a, "b": b, "tiny": tiny})
    assert held["a"] is a and held["b"] is b and held["tiny"] is tiny  # within the budget: the same objects
    more = store.keep({"c": c, "d": c * 2, "again": c})
    assert held["a"] is a and more["c"] is c  # 3,000 bytes in memory: the budget is full
    assert isinstance(more["d"], np.memmap) and not more["d"].flags.writeable
    np.testing.assert_array_equal(more["d"], c * 2)
    assert more["again"] is c  # one array named twice is one array
    assert store.is_spilled("d") and not store.is_spilled("c")
    assert store.spilled_bytes >= (c * 2).nbytes
    store.close()
    assert not os.path.exists(store.folder)


def test_strided_arrays_are_written_in_c_order():
    store = SpillStore(budget=0, min_bytes=1)
    base = np.arange(2 * 5 * 3, dtype=np.float32).reshape(5, 2, 3)
    view = base.transpose(1, 0, 2)  # (2, 5, 3), not contiguous
    got = store.keep({"v": view})["v"]
    assert isinstance(got, np.memmap) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, view)
    store.close()


def test_nan_check_happens_before_the_array_leaves_memory():
    store = SpillStore(budget=0, min_bytes=1)
    bad = np.ones(64, np.float32)
    bad[3] = np.nan
    kept = store.keep({"good": np.ones(64, np.float32), "bad": bad})
    assert store.finite == {"good"}  # the bad one is left for the trace's check, which reads it and finds it
    assert nonfinite_arrays(kept, known_finite=store.finite) == {"bad": 1}
    # negative control: without the store's word the good array is read and found finite too
    assert nonfinite_arrays(kept) == {"bad": 1}
    store.close()


def test_copy_in_maps_a_saved_member():
    store = SpillStore(budget=0)
    want = np.linspace(0, 1, 1000).astype(np.float16).reshape(10, 100)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, want, allow_pickle=False)
    buf.seek(0)
    got = store.copy_in("m", buf)
    assert isinstance(got, np.memmap) and got.dtype == np.float16
    np.testing.assert_array_equal(got, want)
    store.close()
