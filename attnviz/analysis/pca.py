"""Principal components of patch-embedding filters and of embedding clouds.

The ViT paper (Dosovitskiy et al. 2021, Fig. 7 left) shows the first 28 principal components of the
learned patch-embedding filters: they look like smooth basis functions (blobs, edges, stripes), the
kind of low-frequency dictionary a CNN's first layer learns too.

The components are the right singular vectors of the centred data (numpy's SVD, LAPACK ``gesdd``):
working on the data itself rather than on XᵀX keeps weak directions accurate (forming XᵀX squares the
condition number, so a component with 10⁻⁹ of the leading standard deviation would drown in rounding).
Signs are fixed so that the largest-magnitude entry of every component is positive (singular vectors
are only defined up to sign; a stable choice keeps figures from flipping colours).
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError

__all__ = ["compute_filter_pca", "compute_embedding_pca", "principal_components", "broken_stick"]


def principal_components(data: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PCA of the rows of ``data`` (N, F).

    Returns
    -------
    components : (k', F) unit principal directions, strongest first. k' = min(k, N - 1, F): centred
        data spans at most N - 1 directions, beyond which a "component" would be arbitrary.
    ratio : (k',) share of the total variance along each direction.
    centred : (N, F) the data minus its mean (float64), for projecting.
    """
    x = np.asarray(data, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise InputError(f"PCA needs at least two samples in a 2-D array, got shape {x.shape}")
    if k < 1:
        raise InputError(f"number of components must be positive, got {k}")
    centred = x - x.mean(axis=0, keepdims=True)
    n, f = centred.shape
    k = min(k, n - 1, f)
    # singular values come back sorted, largest first; the variance along vᵢ is sᵢ² / n
    _, sing, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:k].copy()  # (k, F)
    total = float((sing**2).sum())  # = ‖centred‖²_F, the total variance times n
    ratio = sing[:k] ** 2 / total if total > 0 else np.zeros(k)
    peak = np.argmax(np.abs(comps), axis=1)  # (k,)
    signs = np.sign(comps[np.arange(k), peak])
    comps *= np.where(signs == 0, 1.0, signs)[:, None]
    return comps, ratio, centred


def compute_filter_pca(weight: np.ndarray, k: int = 28) -> tuple[np.ndarray, np.ndarray]:
    """Principal components of the patch-embedding filters.

    Parameters
    ----------
    weight : (D, C, P, P) the patch-embedding convolution weight (one C×P×P filter per output dim).
    k : number of components (28 in the ViT paper); capped at min(D - 1, C·P·P).

    Returns
    -------
    components : (k, P, P, C) each component as a small image (channels last, ready to show as RGB).
    explained_variance_ratio : (k,) share of the filters' variance each component explains.
    """
    w = np.asarray(weight)
    if w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise InputError(f"patch-embedding weight must be (D, C, P, P), got shape {w.shape}")
    D, C, P, _ = w.shape
    comps, ratio, _ = principal_components(w.reshape(D, C * P * P), k)  # rows: flattened (C, P, P)
    images = comps.reshape(-1, C, P, P).transpose(0, 2, 3, 1)  # (k, P, P, C)
    return images, ratio


def compute_embedding_pca(emb: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Project N embedding vectors onto their first k principal components (a 2-D or 3-D scatter).

    Parameters
    ----------
    emb : (N, D) vectors (token embeddings, positional embeddings, residual stream rows…).
    k : number of output coordinates; capped at min(N - 1, D).

    Returns
    -------
    coords : (N, k) coordinates of each vector along the components.
    explained_variance_ratio : (k,).
    """
    comps, ratio, centred = principal_components(emb, k)
    return centred @ comps.T, ratio


def broken_stick(p: int, k: int) -> np.ndarray:
    """The broken-stick shares of the first ``k`` of ``p`` components: b_j = (1/p) Σ_{i=j}^{p} 1/i.

    What the j-th largest of p shares would be if the variance were split at random (a stick broken at
    p − 1 uniform points). A component whose explained share is below b_j explains no more than noise
    would (Jackson 1993, "Stopping rules in principal components analysis"), so a figure marks it.
    """
    if p < 1 or k < 0:
        raise InputError(f"broken stick needs p ≥ 1 and k ≥ 0, got p={p}, k={k}")
    inv = 1.0 / np.arange(1, p + 1)
    tail = np.cumsum(inv[::-1])[::-1]  # tail[j] = Σ_{i=j+1}^{p} 1/i (0-based)
    return tail[:k] / p
