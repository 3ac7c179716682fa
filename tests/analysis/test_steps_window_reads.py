"""The walkthrough and the matrix form read q and k before the rotation only at the positions they show.

A long trace does not store them: it recomputes them by undoing the rotation (``meta["recomputed"]``). Here
the rotated q is an array that raises if every position is read, so a read of the whole (H, T, dh) fails;
the rows read are checked against the vectors the rotation was applied to (rotary written out here)."""

import numpy as np
import pytest

from attnviz.analysis.steps_inputs import block_f64
from attnviz.capture.recomputed import Recomputed
from attnviz.capture.trace import Trace

H, T, DH, D_ROT = 3, 64, 8, 8


class WholeRead(AssertionError):
    pass


class RowsOnly:
    """A (H, T, dh) array that raises when every position is asked for (whole, or a slice of all of T)."""

    def __init__(self, a: np.ndarray):
        self.a, self.shape, self.dtype, self.ndim = a, a.shape, a.dtype, a.ndim

    def __getitem__(self, key):
        rows = key[1] if isinstance(key, tuple) and len(key) > 1 else slice(None)
        if len(np.arange(self.shape[1])[rows].reshape(-1)) == self.shape[1]:
            raise WholeRead(f"all {self.shape[1]} positions read")
        return self.a[key]

    def __array__(self, dtype=None, copy=None):
        raise WholeRead("the whole array read")


def _rotate(t, cos, sin):
    """transformers' apply_rotary_pos_emb on the last axis: t·cos + rotate_half(t)·sin."""
    half = t.shape[-1] // 2
    return t * cos + np.concatenate((-t[..., half:], t[..., :half]), axis=-1) * sin


@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    pre = rng.standard_normal((H, T, DH)).astype(np.float32)  # what entered the rotation
    ang = np.arange(T)[:, None] / 10000 ** (np.arange(D_ROT // 2) / (D_ROT // 2))  # (T, d/2)
    ang = np.concatenate([ang, ang], axis=-1)
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    rotated = _rotate(pre, cos, sin).astype(np.float32)
    rule = Recomputed("unrotated", [RowsOnly(rotated), cos, sin], (H, T, DH), np.float32)
    trace = Trace(tokens=[f"t{i}" for i in range(T)], meta={"kind": "decoder"}, arrays={"L0.q": rotated},
                  deferred={"L0.q_pre_rope": rule})
    return trace, pre


def test_one_query_row_is_read_alone(setup):
    trace, pre = setup
    with pytest.raises(WholeRead):  # the control: reading every position of this trace fails
        trace["L0.q_pre_rope"]
    got = block_f64(trace, "L0.q_pre_rope", 1, 37)
    assert got.shape == (DH,) and got.dtype == np.float64
    np.testing.assert_allclose(got, pre[1, 37], atol=1e-5)
    assert not np.allclose(block_f64(trace, "L0.q_pre_rope", 1, 38), pre[1, 37], atol=1e-3)  # the next row differs


def test_a_window_of_rows_of_every_head(setup):
    trace, pre = setup
    got = block_f64(trace, "L0.q_pre_rope", slice(None), slice(20, 36))
    assert got.shape == (H, 16, DH)
    np.testing.assert_allclose(got, pre[:, 20:36], atol=1e-5)
    # negative control: undone with the table rows of the next positions, the same rows are not what entered
    from attnviz.capture.recomputed import KINDS

    rotated, cos, sin = trace.deferred["L0.q_pre_rope"].sources
    off = KINDS["unrotated"][0](rotated[:, 20:36], cos[21:37], sin[21:37])
    assert not np.allclose(off, pre[:, 20:36], atol=1e-3)


def test_a_stored_array_is_sliced():
    a = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)
    trace = Trace(tokens=list("abcde"), meta={"kind": "decoder"}, arrays={"L0.q_pre_rope": a})
    np.testing.assert_array_equal(block_f64(trace, "L0.q_pre_rope", 1, slice(1, 3)), a[1, 1:3])
