"""What the model view draws, computed without Qt: pooled thumbnails and per-head statistics.

``summarize_thumbnails`` is cheap (block-max pooling); ``summarize_stats`` runs the analysis
functions (entropy, mean attention distance) and may take a while for long inputs, so the model view
runs it in a background thread, and an app worker may call it too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.analysis.distance import head_statistics
from attnviz.analysis.trace_head_scores import rows_per_block
from attnviz.gui.views.heatmap_data import block_all, block_all_into, block_max, pool_factor, quantize
from attnviz.analysis.trace_parts import masked_cells
from attnviz.errors import InputError

__all__ = ["Thumbnails", "HeadStats", "PooledMaps", "pool_maps", "colour_thumbnails", "summarize_thumbnails",
           "summarize_stats", "join_stats", "stats_or_error", "too_long_for_grid", "longest_for_grid"]


@dataclass
class Thumbnails:
    """``images`` (L, H, s, s) uint8 LUT indices; ``max_weight`` (L, H).

    ``tops`` (L, H): the value each tile's top colour stands for — all 1 ("fixed"), all the grid's
    largest weight ("shared", also ``vmax``), or each head's own maximum ("per-map").
    """

    images: np.ndarray
    vmax: float
    max_weight: np.ndarray
    pool: tuple[int, int]
    scale: str = "fixed"
    tops: np.ndarray | None = None


@dataclass
class HeadStats:
    """Per-head statistics (L, H): entropy in nats, mean attention distance in ``distance_unit``."""

    entropy: np.ndarray
    distance: np.ndarray | None
    distance_unit: str


def _prefix(part: str, layer: int) -> str:
    from attnviz.capture.trace import layer_prefix

    return layer_prefix(layer, part)


# Above this many weights over every layer and head of a part (layers × heads × T_q × T_k) of maps the trace
# does not hold (a long input's probabilities are recomputed on demand), the grid is not drawn: the thumbnails
# and statistics stream over row blocks (memory O(heads · block · T)), but every weight is still computed once,
# about 17 million a CPU-second here (2^31: about two CPU-minutes). A 2-layer, 4-head model passes at 16,384
# tokens; 30 layers × 9 heads at 2,820.
GRID_ON_DEMAND_WEIGHTS = 1 << 31


def longest_for_grid(n_layers: int, n_heads: int) -> int:
    """The most tokens (square self-attention) whose every head :data:`GRID_ON_DEMAND_WEIGHTS` allows."""
    return int((GRID_ON_DEMAND_WEIGHTS / max(1, n_layers * n_heads)) ** 0.5)


def too_long_for_grid(trace, part: str = "self") -> str | None:
    """One line saying why the all-heads grid of ``part`` is not drawn for ``trace``; None when it is."""
    from attnviz.capture.trace import layer_prefix

    n = trace.layers_in(part)
    if not n or layer_prefix(0, part) + "probs" in trace.arrays:
        return None
    h, tq, tk = trace.probs_shape(0, part)
    if n * h * tq * tk <= GRID_ON_DEMAND_WEIGHTS:
        return None
    return (f"all heads: drawn up to {longest_for_grid(n, h):,} tokens for {n} layers × {h} heads "
            f"({tq:,} here: every head's whole map, {n * h * tq * tk:,} weights, recomputed from q and k); "
            f"the head map shows any head of this input")


def n_layers_of(trace, part: str) -> int:
    return trace.layers_in(part)


@dataclass
class PooledMaps:
    """Every head's map of one part block-max pooled: ``pooled`` (L, H, s, s) float32, ``masked`` (s, s) bool
    blocks the mask blocks wholly (or None), ``pool`` the (rows, cols) pooling factors. The expensive step of
    the thumbnails (a long input's maps are recomputed from q and k); colouring them is cheap."""

    pooled: np.ndarray
    masked: np.ndarray | None
    pool: tuple[int, int]


def pool_maps(trace, part: str = "self", thumb_px: int = 64, progress=None) -> PooledMaps:
    """Block-max pool every layer and head of ``part`` to at most ``thumb_px`` a side, streamed over row blocks
    (a long input's maps are recomputed block by block, never whole). ``progress(layers_done, layers)`` after
    each layer (a long input's grid takes minutes: the view says how far it is)."""
    L, H = n_layers_of(trace, part), trace.n_heads
    _, tq, tk = trace.probs_shape(0, part)  # (H, Tq, Tk)
    kr, kc = pool_factor(tq, thumb_px), pool_factor(tk, thumb_px)
    step = max(kr, rows_per_block(H, tk) // kr * kr)  # a whole number of pooling rows a block
    pooled = np.empty((L, H, -(-tq // kr), -(-tk // kc)), np.float32)
    for layer in range(L):
        for r0 in range(0, tq, step):  # (H, r, Tk) → (H, r / kr, s), all heads at once
            pooled[layer, :, r0 // kr: -(-min(tq, r0 + step) // kr)] = block_max(
                trace.probs(layer, part, rows=slice(r0, r0 + step)), kr, kc)
        if progress is not None:
            progress(layer + 1, L)
    return PooledMaps(pooled, _pooled_masked(trace, _prefix(part, 0), kr, kc, step), (kr, kc))


def summarize_thumbnails(trace, part: str = "self", thumb_px: int = 64, scale: str = "fixed") -> Thumbnails:
    """Block-max pooled thumbnails of every layer and head of ``part``, quantised for colour.

    scale : "fixed" (0..1), "shared" (0..largest weight anywhere in the grid) or "per-map" (each
        tile 0..its own largest weight); "unit"/"max" are the old names of fixed/shared.
    """
    return colour_thumbnails(pool_maps(trace, part, thumb_px), scale)


def colour_thumbnails(maps: PooledMaps, scale: str = "fixed") -> Thumbnails:
    """:class:`Thumbnails` of pooled maps in a colour scale (see :func:`summarize_thumbnails`)."""
    scale = {"unit": "fixed", "max": "shared"}.get(scale, scale)
    if scale not in ("fixed", "shared", "per-map"):
        raise ValueError(f"unknown colour scale {scale!r}")
    pooled, masked = maps.pooled, maps.masked
    L, H = pooled.shape[:2]
    max_weight = pooled.max(axis=(2, 3))  # (L, H)
    grid_max = float(max_weight.max())
    vmax = grid_max if scale == "shared" and grid_max > 0 else 1.0
    if scale == "per-map":
        tops = np.where(max_weight > 0, max_weight, 1.0).astype(np.float32)  # (L, H)
    else:
        tops = np.full((L, H), vmax, np.float32)
    if scale == "per-map":
        images = np.empty(pooled.shape, np.uint8)
        for layer in range(L):
            for h in range(H):
                images[layer, h] = quantize(pooled[layer, h], float(tops[layer, h]), masked)
    else:
        images = quantize(pooled, vmax, None if masked is None else np.broadcast_to(masked, pooled.shape))
    return Thumbnails(images=images, vmax=vmax, max_weight=max_weight, pool=maps.pool, scale=scale, tops=tops)


def _pooled_masked(trace, prefix: str, kr: int, kc: int, step: int) -> np.ndarray | None:
    """The kr × kc blocks every cell of which the mask blocks (None: no mask); a mask computed on demand is read
    a row block at a time (``step`` rows, a multiple of ``kr``), never whole."""
    pending = trace.deferred.get(prefix + "mask")
    if prefix + "mask" in trace.arrays or pending is None or not hasattr(pending, "block"):
        masked = masked_cells(trace, prefix)
        return None if masked is None else block_all(masked, kr, kc)
    tq, tk = pending.shape
    out = np.ones((-(-tq // kr), -(-tk // kc)), bool)
    # bands bounded in rows × keys, not ``step`` rows: the All heads grid at 131,072 tokens asked 2,048-row blocks
    # of the mask (2,048 × 131,072 cells, ~3.5 GB with their temporaries: the app grew to 4.8 GB)
    rows = min(step, rows_per_block(1, tk))
    for r0 in range(0, tq, rows):
        block_all_into(out, np.isneginf(pending.block(rows=slice(r0, r0 + rows))), r0, kr, kc)
    return out


def summarize_stats(trace, part: str = "self", layers: range | None = None) -> HeadStats:
    """Entropy (nats) and mean attention distance per layer and head of ``part``.

    Distances are in pixels for a vision transformer, in tokens for text; cross-attention has no
    common positions for queries and keys, so its distance is None. ``layers``: only these (rows in
    that order; every layer's numbers are computed on their own, so halves joined by
    :func:`join_stats` equal the whole).
    """
    # one layer at a time, converted to float64 once for both analyses (each converting it again cost
    # ~8 ms a BERT-base keystroke); per layer the same calls as on the whole trace: the same numbers
    grid, patch_size = None, 1.0
    if part == "self" and trace.grid is not None:  # what mean_attention_distance reads from a Trace
        grid, patch_size = trace.grid, trace.description.config.get("patch_size", 1.0)
    layers = range(trace.layers_in(part)) if layers is None else layers
    n = len(layers)
    if n == 0:
        raise InputError("no attention layers given")
    entropy = distance = None
    for row, i in enumerate(layers):  # each layer streamed over row blocks (analysis.distance.head_statistics)
        e, d = head_statistics(trace, i, part, with_distance=part != "cross", grid=grid, patch_size=patch_size)
        entropy = np.zeros((n, e.shape[0])) if entropy is None else entropy
        entropy[row] = e
        if d is not None:
            distance = np.zeros((n, d.shape[0])) if distance is None else distance
            distance[row] = d
    if part == "cross":
        return HeadStats(entropy, None, "")
    unit = "px" if part == "self" and trace.grid is not None else "tokens"
    return HeadStats(entropy, distance, unit)


def join_stats(first, second):
    """The statistics of two consecutive layer ranges as one; an exception (a worker's result) wins."""
    for part in (first, second):
        if isinstance(part, Exception):
            return part
    distance = None if first.distance is None else np.concatenate([first.distance, second.distance])
    return HeadStats(np.concatenate([first.entropy, second.entropy]), distance, first.distance_unit)


def stats_or_error(trace, part: str, layers: range):
    """:func:`summarize_stats` of ``layers`` for a worker: an exception is returned, not raised."""
    try:
        return summarize_stats(trace, part, layers)
    except Exception as exc:  # noqa: BLE001 - shown in the view's title, never raised into Qt
        return exc
