"""What the model view draws, computed without Qt: pooled thumbnails and per-head statistics.

``summarize_thumbnails`` is cheap (block-max pooling); ``summarize_stats`` runs the analysis
functions (entropy, mean attention distance) and may take a while for long inputs, so the model view
runs it in a background thread, and an app worker may call it too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.analysis import attention_entropy, mean_attention_distance
from attnviz.gui.views.heatmap_data import block_all, block_max, pool_factor, quantize
from attnviz.analysis.trace_parts import masked_cells
from attnviz.errors import InputError

__all__ = ["Thumbnails", "HeadStats", "summarize_thumbnails", "summarize_stats", "join_stats", "stats_or_error"]


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


# Above this many weights per layer (heads × T_q × T_k) of a map the trace does not hold (a long input's
# probabilities are recomputed on demand), the grid is not drawn: it would compute every head's whole map
# (30 layers × 9 heads at T = 16,384 is 7·10^10 weights). 2^26 is 9 heads at 2,730 tokens.
GRID_ON_DEMAND_WEIGHTS = 1 << 26


def too_long_for_grid(trace, part: str = "self") -> str | None:
    """One line saying why the all-heads grid of ``part`` is not drawn for ``trace``; None when it is."""
    from attnviz.capture.trace import layer_prefix

    n = trace.layers_in(part)
    if not n or layer_prefix(0, part) + "probs" in trace.arrays:
        return None
    h, tq, tk = trace.probs_shape(0, part)
    if h * tq * tk <= GRID_ON_DEMAND_WEIGHTS:
        return None
    return (f"all heads: not drawn above {GRID_ON_DEMAND_WEIGHTS:,} weights a layer ({h} heads × {tq:,} × {tk:,} "
            f"here): it would compute every head's whole map; the head map shows any head of this input")


def n_layers_of(trace, part: str) -> int:
    return trace.layers_in(part)


def summarize_thumbnails(trace, part: str = "self", thumb_px: int = 64, scale: str = "fixed") -> Thumbnails:
    """Block-max pooled thumbnails of every layer and head of ``part``, quantised for colour.

    scale : "fixed" (0..1), "shared" (0..largest weight anywhere in the grid) or "per-map" (each
        tile 0..its own largest weight); "unit"/"max" are the old names of fixed/shared.
    """
    scale = {"unit": "fixed", "max": "shared"}.get(scale, scale)
    if scale not in ("fixed", "shared", "per-map"):
        raise ValueError(f"unknown colour scale {scale!r}")
    L, H = n_layers_of(trace, part), trace.n_heads
    _, tq, tk = trace.probs_shape(0, part)  # (H, Tq, Tk)
    kr, kc = pool_factor(tq, thumb_px), pool_factor(tk, thumb_px)
    pooled = None
    for layer in range(L):
        img = block_max(trace.probs(layer, part), kr, kc)  # (H, Tq, Tk) → (H, s, s), all heads at once
        if pooled is None:
            pooled = np.empty((L,) + img.shape, np.float32)
        pooled[layer] = img
    max_weight = pooled.max(axis=(2, 3))  # (L, H)
    grid_max = float(max_weight.max())
    vmax = grid_max if scale == "shared" and grid_max > 0 else 1.0
    if scale == "per-map":
        tops = np.where(max_weight > 0, max_weight, 1.0).astype(np.float32)  # (L, H)
    else:
        tops = np.full((L, H), vmax, np.float32)
    masked = masked_cells(trace, _prefix(part, 0))
    masked = None if masked is None else block_all(masked, kr, kc)
    if scale == "per-map":
        images = np.empty(pooled.shape, np.uint8)
        for layer in range(L):
            for h in range(H):
                images[layer, h] = quantize(pooled[layer, h], float(tops[layer, h]), masked)
    else:
        images = quantize(pooled, vmax, None if masked is None else np.broadcast_to(masked, pooled.shape))
    return Thumbnails(images=images, vmax=vmax, max_weight=max_weight, pool=(kr, kc), scale=scale, tops=tops)


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
        grid, patch_size = trace.grid, trace.meta.get("config", {}).get("patch_size", 1.0)
    layers = range(trace.layers_in(part)) if layers is None else layers
    n = len(layers)
    if n == 0:
        raise InputError("no attention layers given")
    entropy = distance = None
    for row, i in enumerate(layers):
        p = [np.asarray(trace.probs(i, part), dtype=np.float64)]  # as ProbLayers converts it
        e = attention_entropy(p)[0]
        entropy = np.zeros((n, e.shape[0])) if entropy is None else entropy
        entropy[row] = e
        if part != "cross":
            d = mean_attention_distance(p, grid=grid, patch_size=patch_size)[0]
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
