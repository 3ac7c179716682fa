"""The level-of-detail pyramid: every level is the exact block maximum, viewports crop the right level."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.pyramid import MaxPyramid, max_pool2


def _block_max(a, f):
    """Independent reference: pad to a multiple of f, then reshape and take the maximum."""
    r, c = a.shape
    p = np.zeros((-(-r // f) * f, -(-c // f) * f), np.float64)
    p[:r, :c] = a
    return p.reshape(p.shape[0] // f, f, p.shape[1] // f, f).max(axis=(1, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(37, 53), (64, 64), (1, 9)])
def test_every_level_is_the_block_maximum(dtype, shape):
    a = np.random.default_rng(1).random(shape).astype(dtype)
    pyr = MaxPyramid(a, min_side=2)
    assert pyr.levels[0] is a
    for level, arr in enumerate(pyr.levels):
        assert arr.dtype == dtype
        np.testing.assert_array_equal(arr.astype(np.float64), _block_max(a.astype(np.float64), 1 << level))


def test_a_one_token_diagonal_survives_every_level():
    a = np.eye(1000, dtype=np.float16)
    for arr in MaxPyramid(a, min_side=8).levels:
        assert float(arr.max()) == 1.0 and np.all(np.diag(arr.astype(np.float32)) == 1.0)


def test_viewports_pick_the_finest_level_within_the_screen_and_line_up():
    a = np.random.default_rng(2).random((4096, 4096)).astype(np.float32)
    pyr = MaxPyramid(a)
    whole = pyr.view(0, 4096, 0, 4096, 800, 1000)
    assert whole.level == 3 and whole.image.shape == (512, 512)  # 4096/800 → 5.1 values per pixel → 8
    zoom = pyr.view(1000.5, 1300, 2000, 2300, 800, 1000)  # 300 tokens on 800 px: full resolution
    assert zoom.level == 0 and (zoom.row0, zoom.row1, zoom.col0, zoom.col1) == (1000, 1300, 2000, 2300)
    np.testing.assert_array_equal(zoom.image, a[1000:1300, 2000:2300])
    mid = pyr.view(1001, 3001, 7, 2007, 600, 600)  # 2000 tokens on 600 px → level 2, block-aligned bounds
    assert mid.level == 2 and (mid.row0, mid.col0) == (1000, 4) and mid.row1 >= 3001 and mid.col1 >= 2007
    assert max(mid.image.shape) <= 600
    np.testing.assert_array_equal(mid.image, _block_max(a, 4)[250:mid.row1 // 4, 1:mid.col1 // 4])
    assert pyr.view(5000, 6000, 0, 10, 100, 100).image.size == 0  # outside the map


def test_extra_memory_is_about_a_third_of_the_map():
    a = np.zeros((2048, 2048), np.float16)
    assert MaxPyramid(a).nbytes_extra <= a.nbytes / 3 + 1
    assert max_pool2(a).shape == (1024, 1024)
