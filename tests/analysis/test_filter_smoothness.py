"""Smoothness of filter components: low-frequency energy share against a direct cosine-sum DCT."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.filter_smoothness import dct_matrix, filter_smoothness, low_frequency_share, noise_share
from attnviz.errors import InputError


def _share_by_loops(c: np.ndarray) -> float:
    """The same share from the DCT-II definition written out as sums (any scale: the share is a ratio)."""
    P = c.shape[0]
    x, y = np.mgrid[0:P, 0:P]
    low = total = 0.0
    for u in range(P):
        for v in range(P):
            wave = np.cos(np.pi * (2 * x + 1) * u / (2 * P)) * np.cos(np.pi * (2 * y + 1) * v / (2 * P))
            # orthonormal weights: √(1/P) for frequency 0, √(2/P) otherwise, per axis
            coef = np.sum(c * wave[..., None], axis=(0, 1)) * np.sqrt((1 if u == 0 else 2) / P * (1 if v == 0 else 2) / P)
            e = float(np.sum(coef**2))  # summed over the colour channels
            total += e
            low += e if u + v < P / 2 else 0.0
    return low / total


def test_share_matches_the_definition_on_random_components():
    rng = np.random.default_rng(0)
    for P in (4, 8):
        c = rng.normal(size=(P, P, 3))
        assert low_frequency_share(c) == pytest.approx(_share_by_loops(c), abs=1e-12)


def test_dct_is_orthonormal_so_energy_is_kept():
    d = dct_matrix(8)
    np.testing.assert_allclose(d @ d.T, np.eye(8), atol=1e-12)


def test_smooth_patterns_score_high_and_noise_scores_at_its_share():
    P = 8
    y, x = np.mgrid[0:P, 0:P] + 0.5
    ramp = np.stack([x / P - 0.5, 0.3 * (y / P - 0.5), np.zeros((P, P))], -1)  # a colour gradient
    assert low_frequency_share(ramp) > 0.95
    d = dct_matrix(P)
    for u, v in [(0, 3), (2, 1), (2, 2), (7, 6)]:  # one basis image: all its energy at frequency (u, v)
        assert low_frequency_share(np.outer(d[u], d[v])) == pytest.approx(float(u + v < P / 2), abs=1e-12)
    rng = np.random.default_rng(1)
    noise = np.mean([low_frequency_share(rng.normal(size=(P, P, 3))) for _ in range(400)])
    assert noise == pytest.approx(noise_share(P), abs=0.01)
    assert noise_share(8) == 10 / 64  # u + v < 4: 1 + 2 + 3 + 4 frequencies


def test_filter_smoothness_averages_the_top_components_and_rejects_bad_input():
    rng = np.random.default_rng(2)
    comps = rng.normal(size=(5, 8, 8, 3))
    want = np.mean([_share_by_loops(c) for c in comps[:3]])
    assert filter_smoothness(comps, 3) == pytest.approx(want, abs=1e-12)
    with pytest.raises(InputError):
        filter_smoothness(comps, 6)
    with pytest.raises(InputError):
        low_frequency_share(np.zeros((8, 4, 3)))
    assert low_frequency_share(np.zeros((8, 8, 3))) == 0.0
