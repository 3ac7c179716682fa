"""Per-head summaries of where attention goes: mean attention distance and attention entropy.

Mean attention distance is the ViT paper's "receptive field size" (Dosovitskiy et al. 2021, Fig. 7
right): for each query, the attention-weighted average distance to the keys, averaged over queries.
Some heads attend far already in the lowest layers, others stay local, and the distance grows with
depth. For text the distance is counted in tokens, |i - j|.

Entropy (nats) tells a sharp head (one key, entropy 0) from a diffuse one (uniform over T keys, log T).
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.rollout import ProbLayers
from attnviz.errors import InputError

__all__ = ["mean_attention_distance", "attention_entropy", "position_distances"]


def position_distances(T: int, grid=None, patch_size: float = 1.0) -> tuple[np.ndarray, int]:
    """Pairwise distances between positions and how many leading non-spatial tokens there are.

    Images: Euclidean distance between patch centres in pixels (grid units × ``patch_size``); a
    leading CLS token (T = gh·gw + 1) has no position and is reported as ``offset = 1``.
    Text (``grid`` None): |i - j| in tokens, offset 0.

    Returns
    -------
    distances : (T - offset, T - offset)
    offset : 0 or 1
    """
    if grid is None:
        idx = np.arange(T, dtype=np.float64)
        return np.abs(idx[:, None] - idx[None, :]), 0
    gh, gw = (int(g) for g in grid)
    n = gh * gw
    if not 0 <= T - n <= 2:  # patches, after none, a CLS, or CLS + distillation token (DeiT)
        raise InputError(f"{T} tokens do not fit a {gh}×{gw} patch grid (with or without a CLS token)")
    rows, cols = np.divmod(np.arange(n), gw)  # row-major patch order, as the model flattens it
    centres = np.stack([rows, cols], axis=1).astype(np.float64) * float(patch_size)  # (n, 2)
    diff = centres[:, None, :] - centres[None, :, :]  # (n, n, 2)
    return np.sqrt((diff**2).sum(-1)), T - n


def mean_attention_distance(probs_list, grid=None, patch_size: float = 1.0, skip_cls: bool = True) -> np.ndarray:
    """Attention-weighted distance from each query to its keys, averaged over queries, per head.

    Parameters
    ----------
    probs_list : list of (H, T, T) per layer, or a Trace (then ``grid`` and ``patch_size`` default to
        the model's when it is a vision transformer).
    grid : (gh, gw) patch grid for images; None for text.
    patch_size : pixels per patch side (distances in pixels); 1 gives grid units.
    skip_cls : images only: leave out the CLS query and its key column. The CLS token has no place on
        the image; its attention mass is dropped and each query's remaining weights renormalised, so a
        head that mostly reads CLS is judged by where its remaining attention goes instead of counting
        as "distance 0". With ``skip_cls=False`` the CLS key counts as distance 0 and CLS queries are
        left out (they have no position to measure from). Text ignores this switch: every text token,
        a [CLS] included, has a position.

    Returns
    -------
    (L, H) float64: pixels (images) or tokens (text).
    """
    if hasattr(probs_list, "all_probs") and grid is None and probs_list.grid is not None:
        grid = probs_list.grid
        patch_size = probs_list.meta.get("config", {}).get("patch_size", patch_size)
    layers = ProbLayers(probs_list)
    out = None
    for i in range(len(layers)):
        p = layers[i]
        T = p.shape[-1]
        if p.shape[1] != T:
            raise InputError("mean attention distance needs self-attention (square maps)")
        if out is None:
            out = np.zeros((len(layers), p.shape[0]))
            dist_all, offset = position_distances(T, grid, patch_size)
        if dist_all.shape[0] + offset != T:
            raise InputError("every layer must have the same number of tokens")
        dist = dist_all
        w = p[:, offset:, :]  # (H, Tq', T) queries with a position
        if offset and skip_cls:
            w = w[:, :, offset:]  # (H, Tq', Tk') drop the CLS key
            rows = w.sum(-1, keepdims=True)
            w = np.divide(w, rows, out=np.zeros_like(w), where=rows > 0)
        elif offset:
            dist = np.pad(dist, ((0, 0), (offset, 0)))  # CLS key column at distance 0
        per_query = np.einsum("hqk,qk->hq", w, dist)  # (H, Tq') without an (H, T, T) temporary
        out[i] = per_query.mean(-1)
    return out


def attention_entropy(probs_list) -> np.ndarray:
    """Shannon entropy of each attention row in nats, averaged over queries: (L, H).

    Masked keys have probability exactly 0 and contribute 0 (the limit of p·log p).
    """
    layers = ProbLayers(probs_list)
    out = None
    for i in range(len(layers)):
        p = layers[i]
        out = np.zeros((len(layers), p.shape[0])) if out is None else out
        logp = np.log(p, out=np.zeros_like(p), where=p > 0)
        out[i] = -(p * logp).sum(-1).mean(-1)
    return out
