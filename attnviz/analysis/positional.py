"""How similar the positional embeddings of different positions are (ViT paper, Fig. 7 centre).

A learned ViT rediscovers the 2-D layout: each patch's embedding is most similar to its own row and
column. ``patch_position_similarity`` lays the cosine similarities out as one small map per patch.
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError

__all__ = ["positional_similarity", "patch_position_similarity"]


def positional_similarity(pos: np.ndarray) -> np.ndarray:
    """Cosine similarity between every pair of position vectors, (N, D) → (N, N).

    A zero vector (e.g. ``pos="none"``) has similarity 0 with everything, itself included.
    """
    p = np.asarray(pos, dtype=np.float64)
    if p.ndim != 2:
        raise InputError(f"positional embeddings must be (positions, dims), got shape {p.shape}")
    norms = np.linalg.norm(p, axis=1, keepdims=True)  # (N, 1)
    unit = np.divide(p, norms, out=np.zeros_like(p), where=norms > 0)
    return unit @ unit.T


def patch_position_similarity(pos: np.ndarray, grid) -> np.ndarray:
    """Similarity of each patch's position embedding to all others, on the patch grid.

    Parameters
    ----------
    pos : (gh·gw, D) or (gh·gw + 1, D) position embeddings; with the extra row the first one is the
        CLS token's and is left out.
    grid : (gh, gw) patch grid.

    Returns
    -------
    (gh, gw, gh, gw) array: ``out[r, c]`` is the (gh, gw) map of cosine similarities between patch
    (r, c) and every patch.
    """
    gh, gw = (int(g) for g in grid)
    p = np.asarray(pos)
    n = gh * gw
    if p.ndim != 2 or not 0 <= p.shape[0] - n <= 2:  # CLS and DeiT's distillation token come first
        raise InputError(f"{p.shape[0] if p.ndim == 2 else p.shape} position rows do not fit a {gh}×{gw} patch grid")
    patches = p[p.shape[0] - n :]  # drop the CLS (and distillation) rows when present
    return positional_similarity(patches).reshape(gh, gw, gh, gw)  # (query patch r, c, key patch r, c)
