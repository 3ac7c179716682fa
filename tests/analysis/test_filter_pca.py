"""PCA of patch-embedding filters and embeddings against numpy's SVD (signs are arbitrary)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis import compute_embedding_pca, compute_filter_pca
from attnviz.errors import InputError

from tests.models.tiny import build_tiny


def _svd_reference(data: np.ndarray, k: int):
    centred = data - data.mean(0)
    U, S, Vt = np.linalg.svd(centred, full_matrices=False)
    return U[:, :k] * S[:k], Vt[:k], (S**2 / (S**2).sum())[:k]


def _assert_same_up_to_sign(a: np.ndarray, b: np.ndarray, atol: float) -> None:
    for x, y in zip(a, b):  # per component
        sign = np.sign(np.dot(x, y))
        assert sign != 0
        np.testing.assert_allclose(x, sign * y, atol=atol)


@pytest.mark.parametrize("shape, k", [((40, 3, 2, 2), 5), ((10, 3, 4, 4), 28), ((64, 1, 3, 3), 9)])
def test_filter_pca_matches_svd(shape, k):
    # (40 filters, 12 features), (10 filters, 48 features: fewer samples than features), (64, 9)
    rng = np.random.default_rng(1)
    # correlated filters with a clear spectrum so components are well separated
    D, C, P, _ = shape
    weight = (rng.normal(size=(D, 6)) * [5, 3, 2, 1, 0.5, 0.2]) @ rng.normal(size=(6, C * P * P))
    weight = (weight + 0.01 * rng.normal(size=weight.shape)).reshape(shape)
    comps, ratio = compute_filter_pca(weight, k=k)
    k_eff = min(k, D - 1, C * P * P)  # centred data spans at most D - 1 directions
    assert comps.shape == (k_eff, P, P, C) and ratio.shape == (k_eff,)
    _, Vt, ref_ratio = _svd_reference(weight.reshape(D, -1), k_eff)
    flat = comps.transpose(0, 3, 1, 2).reshape(k_eff, -1)  # back to the (C, P, P) flattening
    n_sep = 5  # the first five singular values are well apart; later ones are noise, compare their spans
    _assert_same_up_to_sign(flat[:n_sep], Vt[:n_sep], atol=1e-6)
    np.testing.assert_allclose(ratio, ref_ratio, atol=1e-9)
    np.testing.assert_allclose(flat @ flat.T, np.eye(k_eff), atol=1e-8)  # orthonormal
    assert np.all(np.diff(ratio) <= 1e-12) and ratio.sum() <= 1 + 1e-9


def test_filter_pca_of_a_vit_patch_embedding():
    model = build_tiny("vit")
    weight = model.embed.proj.weight.detach().numpy()  # (D=16, C=3, P=2, P=2)
    comps, ratio = compute_filter_pca(weight)  # 28 asked, only 12 features exist
    assert comps.shape == (12, 2, 2, 3)
    np.testing.assert_allclose(ratio.sum(), 1.0, atol=1e-9)  # all components: all variance
    # signs are fixed: the largest-magnitude entry of each component is positive
    flat = comps.reshape(12, -1)
    assert np.all(flat[np.arange(12), np.abs(flat).argmax(1)] > 0)


def test_embedding_pca_matches_svd():
    rng = np.random.default_rng(2)
    emb = rng.normal(size=(30, 8)) * np.array([4, 2, 1, 0.5, 0.3, 0.2, 0.1, 0.05])
    coords, ratio = compute_embedding_pca(emb, k=3)
    ref_coords, _, ref_ratio = _svd_reference(emb, 3)
    _assert_same_up_to_sign(coords.T, ref_coords.T, atol=1e-8)
    np.testing.assert_allclose(ratio, ref_ratio, atol=1e-10)


def test_pca_bad_input():
    with pytest.raises(InputError, match="two samples"):
        compute_embedding_pca(np.ones((1, 4)))
    with pytest.raises(InputError, match=r"\(D, C, P, P\)"):
        compute_filter_pca(np.ones((4, 3, 2)))
