"""Trace.probs blocks and the max-pooled overview against plain NumPy slicing of the full map."""

import numpy as np
import pytest

from attnviz.capture.trace import Trace


def _trace(T=37, H=3, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(H, T, T)).astype(np.float32)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    meta = {"n_layers": 1, "n_heads": H, "kind": "encoder", "scale": 1.0}
    return Trace(tokens=[f"t{i}" for i in range(T)], meta=meta, arrays={"L0.probs": p}), p


@pytest.mark.parametrize("heads,rows,cols", [
    (None, None, None), (1, None, None), ([2, 0], slice(3, 9), None),
    (None, [0, 5, 36], slice(10, None, 3)), (slice(0, 2), 4, [1, 1, 2]),
])
def test_block_equals_slicing(heads, rows, cols):
    t, p = _trace()
    want = p
    for axis, sel in enumerate((heads, rows, cols)):
        if sel is None:
            continue
        sel = slice(sel, sel + 1) if isinstance(sel, int) else sel
        want = want[(slice(None),) * axis + (sel,)]
    got = t.probs(0, heads=heads, rows=rows, cols=cols)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert t.probs_shape(0) == p.shape


def test_pooled_keeps_every_peak():
    t, p = _trace(T=1000, H=1)
    p = np.full_like(p, 1e-4)
    for c in (3, 401, 998):  # a column of 1.0: max pooling keeps it at any size; mean pooling would not
        p[0, :, c] = 1.0
    t.arrays["L0.probs"] = p
    pooled, rs, cs = t.pooled_probs(0, head=0, max_rows=64, max_cols=64, chunk_rows=100)
    assert pooled.shape[0] <= 64 and pooled.shape[1] <= 64 and rs == cs == 16
    assert all(np.all(pooled[:, c // cs] == 1.0) for c in (3, 401, 998))
    want = np.pad(p[0], ((0, 1008 - 1000),) * 2).reshape(63, 16, 63, 16).max(axis=(1, 3))
    np.testing.assert_array_equal(pooled, want)
    # negative control: a column that was never raised is not 1 anywhere
    assert pooled[:, 200 // cs].max() < 1.0
