"""Block-max pooling of a whole layer (heads × rows × columns) equals an independent per-head numpy
reduction (gui/views/heatmap_data.py)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.gui.views.heatmap_data import block_max


def _reference(a: np.ndarray, kr: int, kc: int) -> np.ndarray:
    a = np.asarray(a, np.float64)
    *lead, r, c = a.shape
    padded = np.zeros((*lead, -(-r // kr) * kr, -(-c // kc) * kc))
    padded[..., :r, :c] = a
    blocks = padded.reshape(*lead, padded.shape[-2] // kr, kr, padded.shape[-1] // kc, kc)
    return blocks.max(axis=(-3, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape,kr,kc", [((12, 128, 128), 2, 2), ((3, 13, 9), 3, 2), ((4, 5, 7), 1, 1),
                                         ((2, 100, 64), 4, 1)])
def test_layer_pooling_equals_per_head_reference(dtype, shape, kr, kc):
    rng = np.random.default_rng(sum(shape))
    a = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1]).astype(dtype)
    got = block_max(a, kr, kc)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _reference(a, kr, kc).astype(np.float32))
    for h in range(shape[0]):  # the 2-D path, head by head, as the grid was pooled before
        np.testing.assert_array_equal(got[h], block_max(a[h], kr, kc))
