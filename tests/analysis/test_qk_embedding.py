"""The joint query–key embedding: attention is unchanged by the normalisation, PCA matches an SVD."""

import numpy as np
import pytest

from attnviz.analysis.qk_embedding import embed_qk, embedding_methods, normalise_qk
from attnviz.errors import InputError


def _softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_normalisation_keeps_every_attention_weight_and_equalises_norms():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(30, 8)) * 3 + 5
    k = rng.normal(size=(40, 8)) * 0.5 - 2
    qn, kn, alpha = normalise_qk(q, k)
    np.testing.assert_allclose(_softmax(qn @ kn.T), _softmax(q @ k.T), atol=1e-12)
    np.testing.assert_allclose(qn.mean(0) / alpha, kn.mean(0) * alpha, atol=1e-12)  # centroids meet (before scaling)
    assert np.linalg.norm(qn, axis=1).mean() == pytest.approx(np.linalg.norm(kn, axis=1).mean())


def test_pca_points_equal_an_svd_projection_of_the_normalised_vectors():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(25, 6)), rng.normal(size=(20, 6)) + 1
    emb = embed_qk(q, k)
    qn, kn, _ = normalise_qk(q, k)
    x = np.concatenate([qn, kn])
    x = x - x.mean(0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    want = x @ vt[:2].T
    np.testing.assert_allclose(np.abs(emb.points), np.abs(want), atol=1e-9)  # components up to sign
    np.testing.assert_allclose(emb.explained, (s[:2] ** 2) / (s**2).sum(), atol=1e-12)
    assert emb.queries.shape == (25, 2) and emb.keys.shape == (20, 2)
    assert emb.axis_labels()[0].startswith("PC1")


def test_unknown_or_missing_methods_are_clear_errors():
    q = np.ones((3, 2))
    with pytest.raises(InputError, match="unknown embedding"):
        embed_qk(q, q, method="mds")
    if "umap" not in embedding_methods():
        with pytest.raises(InputError, match="umap-learn"):
            embed_qk(q, q, method="umap")
    with pytest.raises(InputError):
        normalise_qk(np.ones((3, 2)), np.ones((3, 4)))


def test_tsne_gives_two_coordinates_per_vector_when_scikit_learn_is_installed():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(2)
    emb = embed_qk(rng.normal(size=(30, 4)), rng.normal(size=(30, 4)), method="tsne")
    assert emb.points.shape == (60, 2) and np.isfinite(emb.points).all()
    assert emb.axis_labels() == ("t-SNE 1", "t-SNE 2")
