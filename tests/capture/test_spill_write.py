"""A strided array (a (T, H, dh) tensor viewed as (H, T, dh)) spilled in contiguous pieces reads back equal,
in C order, for pieces smaller and larger than one row and for empty arrays."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.capture import spill


@pytest.mark.parametrize("chunk", [1, 1000, 1 << 22])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_strided_arrays_spill_equal(chunk, dtype, monkeypatch):
    monkeypatch.setattr(spill, "_WRITE_CHUNK", chunk)
    rng = np.random.default_rng(0)
    base = rng.standard_normal((37, 5, 8)).astype(dtype)
    store = spill.SpillStore(budget=0, min_bytes=1)
    try:
        for i, arr in enumerate([base.transpose(1, 0, 2), base[:, 1:4], base[::2], base.T, base[:0].transpose(1, 0, 2)]):
            assert not arr.flags.c_contiguous or arr.size == 0
            back = store.spill(f"a{i}", arr)
            assert isinstance(back, np.memmap) and back.shape == arr.shape and back.dtype == arr.dtype
            np.testing.assert_array_equal(back, arr)
            assert back.flags.c_contiguous
    finally:
        store.close()
