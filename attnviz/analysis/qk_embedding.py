"""One head's queries and keys of a whole data set in one 2-D picture (AttentionViz, Yeh et al. 2023).

Queries and keys live in the same d_head-dimensional space, but a plain joint projection puts them in
two separate clouds: what decides attention is q·k within a row of the softmax, not their distance.
AttentionViz makes nearness mean attention with two changes that leave every attention weight as it was:

* translate the keys so their centroid sits on the queries' centroid: adding a vector c to every
  key adds q·c to every score of a query's row, and the softmax of a row ignores a shared constant;
* scale queries by α and keys by 1/α, with α chosen so both have the same mean norm: q·k is unchanged.

Then both clouds are embedded together: PCA by default (numpy only); t-SNE (scikit-learn) or UMAP
(umap-learn) when those packages are installed.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np

from attnviz.analysis.pca import principal_components
from attnviz.errors import InputError

__all__ = ["normalise_qk", "embed_qk", "embedding_methods", "QKEmbedding"]


def normalise_qk(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """AttentionViz's translation of the keys and the scaling of queries and keys.

    Parameters
    ----------
    q : (Nq, d) query vectors; k : (Nk, d) key vectors of the same head.

    Returns
    -------
    (q · α, (k - mean k + mean q) / α, α). Every query's scores against every key change only by a
    constant per query, so the attention weights are the same.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or len(q) == 0 or len(k) == 0:
        raise InputError(f"queries {q.shape} and keys {k.shape} must be non-empty (N, d) arrays of one width")
    shifted = k - k.mean(0, keepdims=True) + q.mean(0, keepdims=True)
    nq = float(np.linalg.norm(q, axis=1).mean())
    nk = float(np.linalg.norm(shifted, axis=1).mean())
    alpha = float(np.sqrt(nk / nq)) if nq > 0 and nk > 0 else 1.0
    return q * alpha, shifted / alpha, alpha


def embedding_methods() -> list[str]:
    """The 2-D embeddings available here: "pca" always, "tsne" and "umap" when installed."""
    out = ["pca"]
    if importlib.util.find_spec("sklearn") is not None:
        out.append("tsne")
    if importlib.util.find_spec("umap") is not None:
        out.append("umap")
    return out


@dataclass
class QKEmbedding:
    """2-D points of the queries (first ``n_queries`` rows) and then the keys, and how they were made."""

    points: np.ndarray  # (Nq + Nk, 2)
    n_queries: int
    method: str
    alpha: float
    explained: tuple[float, float] | None = None  # PCA: share of variance along each axis

    @property
    def queries(self) -> np.ndarray:
        return self.points[: self.n_queries]

    @property
    def keys(self) -> np.ndarray:
        return self.points[self.n_queries :]

    def axis_labels(self) -> tuple[str, str]:
        if self.method == "pca" and self.explained is not None:
            return tuple(f"PC{i + 1} ({100 * r:.0f} % of variance)" for i, r in enumerate(self.explained))
        name = {"tsne": "t-SNE", "umap": "UMAP"}.get(self.method, self.method)
        return f"{name} 1", f"{name} 2"


def embed_qk(q: np.ndarray, k: np.ndarray, method: str = "pca", seed: int = 0) -> QKEmbedding:
    """Normalise (:func:`normalise_qk`) and embed queries and keys together in 2-D."""
    if method not in ("pca", "tsne", "umap"):
        raise InputError(f"unknown embedding {method!r}: choose pca, tsne or umap")
    if method not in embedding_methods():
        package = {"tsne": "scikit-learn", "umap": "umap-learn"}[method]
        raise InputError(f"the {method} embedding needs the optional package {package}: use pca or install it")
    qn, kn, alpha = normalise_qk(q, k)
    data = np.concatenate([qn, kn])  # (Nq + Nk, d)
    if len(data) < 3:
        raise InputError("too few queries and keys to embed (need at least 3)")
    if method == "pca":
        comps, ratio, centred = principal_components(data, 2)
        pts = centred @ comps.T  # (N, k')
        if pts.shape[1] < 2:
            pts = np.pad(pts, ((0, 0), (0, 2 - pts.shape[1])))
            ratio = np.pad(ratio, (0, 2 - len(ratio)))
        return QKEmbedding(pts, len(qn), "pca", alpha, (float(ratio[0]), float(ratio[1])))
    if method == "tsne":
        from sklearn.manifold import TSNE

        pts = TSNE(n_components=2, perplexity=min(30.0, (len(data) - 1) / 3), init="pca",
                   random_state=seed).fit_transform(data)
    else:
        import umap

        pts = umap.UMAP(n_components=2, random_state=seed).fit_transform(data)
    return QKEmbedding(np.asarray(pts, dtype=np.float64), len(qn), method, alpha)
