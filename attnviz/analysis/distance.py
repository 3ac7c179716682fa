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

__all__ = ["mean_attention_distance", "attention_entropy", "position_distances", "head_statistics", "distance_sums",
           "entropy_sums"]


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
        patch_size = probs_list.description.config.get("patch_size", patch_size)
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
        total, n = distance_sums(p, np.arange(T), dist_all, offset, skip_cls)
        out[i] = total / n
    return out


def distance_sums(block: np.ndarray, rows: np.ndarray, dist_all: np.ndarray | None, offset: int = 0,
                  skip_cls: bool = True) -> tuple[np.ndarray, int]:
    """Sum over the query rows of a block of each row's attention-weighted distance, and how many rows counted.

    The one computation behind :func:`mean_attention_distance` (a whole map is one block) and the streamed
    statistics of long inputs (:func:`head_statistics`): the mean is the sums of every block over the counts.

    Parameters
    ----------
    block : (H, r, T) probabilities of the query rows ``rows`` (absolute positions) over all T keys.
    dist_all : (T - offset, T - offset) distances between positions (images); None: text, |i - j| tokens,
        built for these rows only (a long input never builds T × T).
    offset, skip_cls : leading non-spatial tokens and what to do with them (:func:`mean_attention_distance`).

    Returns
    -------
    ((H,) float64 sum over counted rows, number of counted rows).
    """
    rows = np.asarray(rows)
    keep = rows >= offset  # queries with a position
    w = block[:, keep, :]  # (H, r', T)
    q = rows[keep] - offset
    if dist_all is None:
        dist = np.abs(q[:, None] - np.arange(block.shape[-1] - offset)[None, :]).astype(np.float64)  # (r', T')
    else:
        dist = dist_all[q]  # (r', T - offset)
    if offset and skip_cls:
        w = w[:, :, offset:]  # (H, r', T') drop the CLS key
        mass = w.sum(-1, keepdims=True)
        w = np.divide(w, mass, out=np.zeros_like(w), where=mass > 0)
    elif offset:
        dist = np.pad(dist, ((0, 0), (offset, 0)))  # CLS key column at distance 0
    per_query = np.einsum("hqk,qk->hq", w, dist)  # (H, r') without an (H, r, T) temporary
    return per_query.sum(-1), int(keep.sum())


def attention_entropy(probs_list) -> np.ndarray:
    """Shannon entropy of each attention row in nats, averaged over queries: (L, H).

    Masked keys have probability exactly 0 and contribute 0 (the limit of p·log p).
    """
    layers = ProbLayers(probs_list)
    out = None
    for i in range(len(layers)):
        p = layers[i]
        out = np.zeros((len(layers), p.shape[0])) if out is None else out
        out[i] = entropy_sums(p) / p.shape[1]
    return out


def entropy_sums(block: np.ndarray) -> np.ndarray:
    """(H,) sum over the rows of a block (H, r, T) of each row's entropy in nats (0·log 0 = 0)."""
    logp = np.log(block, out=np.zeros_like(block), where=block > 0)
    return -(block * logp).sum(-1).sum(-1)


def head_statistics(trace, layer: int, part: str = "self", with_distance: bool = True, grid=None,
                    patch_size: float = 1.0, skip_cls: bool = True, block_cells: int | None = None):
    """Mean entropy and mean attention distance of every head of one layer, streamed over blocks of query rows.

    A long input's probabilities are recomputed on demand (:meth:`Trace.probs` of a block): memory is
    O(H · block rows · T), never the layer's whole map; the numbers equal :func:`attention_entropy` and
    :func:`mean_attention_distance` of the whole map.

    Parameters
    ----------
    trace : a :class:`~attnviz.capture.Trace`.
    layer, part : which attention block.
    with_distance : also the distance (square self-attention only; cross-attention has none).
    grid, patch_size, skip_cls : as :func:`mean_attention_distance` (``grid`` None: text, distances in tokens).
    block_cells : the most (head × row × key) weights one block holds (default: the head scores' budget).

    Returns
    -------
    (entropy (H,) nats, distance (H,) or None)
    """
    from attnviz.analysis.trace_head_scores import BLOCK_CELLS, rows_per_block

    H, tq, tk = trace.probs_shape(layer, part)
    if with_distance and tq != tk:
        raise InputError("mean attention distance needs self-attention (square maps)")
    dist_all, offset = (None, 0) if not with_distance or grid is None else position_distances(tk, grid, patch_size)
    ent, dist, counted = np.zeros(H), np.zeros(H), 0
    step = rows_per_block(H, tk, block_cells or BLOCK_CELLS)
    for r0 in range(0, tq, step):
        rows = np.arange(r0, min(tq, r0 + step))
        block = np.asarray(trace.probs(layer, part, rows=slice(r0, r0 + len(rows))), dtype=np.float64)  # (H, r, Tk)
        ent += entropy_sums(block)
        if with_distance:
            total, n = distance_sums(block, rows, dist_all, offset, skip_cls)
            dist += total
            counted += n
    return ent / tq, (dist / counted if with_distance else None)
