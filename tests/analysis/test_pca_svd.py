"""PCA by SVD, checked against what does not use an SVD: data built from known directions and
variances, and the eigen-decomposition of the covariance matrix written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.pca import compute_embedding_pca, principal_components


def _known_data(rng, n: int, stds, f: int):
    """n samples with exactly the given standard deviations along orthonormal directions (rows of V)."""
    k = len(stds)
    v, _ = np.linalg.qr(rng.normal(size=(f, k)))  # (f, k) orthonormal columns
    # orthonormal, zero-mean sample coordinates: centring a column of ones' complement
    u, _ = np.linalg.qr(np.column_stack([np.ones(n), rng.normal(size=(n, k))]))
    u = u[:, 1:]  # (n, k) orthonormal and orthogonal to the constant vector, so already centred
    data = (u * np.asarray(stds) * np.sqrt(n)) @ v.T + rng.normal(size=f)  # plus an arbitrary mean
    return data, v.T  # directions (k, f)


def _same_up_to_sign(a, b, atol):
    for x, y in zip(a, b):
        s = np.sign(np.dot(x, y))
        assert s != 0
        np.testing.assert_allclose(x, s * y, atol=atol)


def test_recovers_known_directions_and_variance_shares():
    rng = np.random.default_rng(0)
    stds = [3.0, 2.0, 1.0, 0.5]
    data, dirs = _known_data(rng, 50, stds, 7)
    comps, ratio, centred = principal_components(data, 4)
    _same_up_to_sign(comps, dirs, atol=1e-10)
    var = np.square(stds)
    np.testing.assert_allclose(ratio, var / var.sum(), atol=1e-12)
    np.testing.assert_allclose(centred.mean(0), 0, atol=1e-12)


def test_weak_directions_stay_accurate_where_the_gram_matrix_loses_them():
    # standard deviations 1, 1e-9, 1e-10: XᵀX holds 1, 1e-18, 1e-20, below float64 rounding of 1
    rng = np.random.default_rng(1)
    data, dirs = _known_data(rng, 20, [1.0, 1e-9, 1e-10], 5)
    data -= data.mean(0)  # keep the mean out of it: only the conditioning is under test
    comps, _, _ = principal_components(data, 3)
    _same_up_to_sign(comps, dirs, atol=1e-5)
    # the eigen-decomposition of XᵀX does not get the second direction right
    evals, evecs = np.linalg.eigh(data.T @ data)
    gram_second = evecs[:, np.argsort(evals)[::-1][1]]
    assert abs(abs(gram_second @ dirs[1]) - 1) > 1e-3


@pytest.mark.parametrize("n, f", [(40, 6), (8, 30)])  # more samples than features, and fewer
def test_matches_the_covariance_eigen_decomposition(n, f):
    rng = np.random.default_rng(n)
    data = rng.normal(size=(n, f)) @ np.diag(np.linspace(3, 0.5, f)) + 2.0
    k = min(n - 1, f, 5)
    comps, ratio, _ = principal_components(data, k)
    cov = np.cov(data, rowvar=False)  # (f, f), an independent route to the same directions
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    _same_up_to_sign(comps, evecs[:, order[:k]].T, atol=1e-8)
    np.testing.assert_allclose(ratio, evals[order[:k]] / evals.sum(), atol=1e-10)
    np.testing.assert_allclose(comps @ comps.T, np.eye(k), atol=1e-10)


def test_sign_convention_largest_entry_positive_and_stable_under_negation():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(30, 6)) * [5, 4, 3, 2, 1, 0.5]
    comps, _, _ = principal_components(data, 6 - 1)
    peak = np.abs(comps).argmax(1)
    assert np.all(comps[np.arange(len(comps)), peak] > 0)
    # negating the data flips no component: the convention, not the solver, picks the sign
    np.testing.assert_allclose(principal_components(-data, 5)[0], comps, atol=1e-10)


def test_embedding_coordinates_are_projections_onto_the_components():
    rng = np.random.default_rng(4)
    data, dirs = _known_data(rng, 25, [4.0, 1.0], 3)
    coords, ratio = compute_embedding_pca(data, 2)
    centred = data - data.mean(0)
    comps = principal_components(data, 2)[0]
    np.testing.assert_allclose(coords, centred @ comps.T, atol=1e-12)
    np.testing.assert_allclose(coords.var(0) / centred.var(0).sum(), ratio, atol=1e-12)
