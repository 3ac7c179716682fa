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
from attnviz.gui.views.trace_parts import masked_cells

__all__ = ["Thumbnails", "HeadStats", "summarize_thumbnails", "summarize_stats"]


@dataclass
class Thumbnails:
    """``images`` (L, H, s, s) uint8 LUT indices on one colour scale 0..``vmax``; ``max_weight`` (L, H)."""

    images: np.ndarray
    vmax: float
    max_weight: np.ndarray
    pool: tuple[int, int]


@dataclass
class HeadStats:
    """Per-head statistics (L, H): entropy in nats, mean attention distance in ``distance_unit``."""

    entropy: np.ndarray
    distance: np.ndarray | None
    distance_unit: str


def _prefix(part: str, layer: int) -> str:
    from attnviz.capture.trace import layer_prefix

    return layer_prefix(layer, part)


def n_layers_of(trace, part: str) -> int:
    return trace.layers_in(part)


def summarize_thumbnails(trace, part: str = "self", thumb_px: int = 64, scale: str = "max") -> Thumbnails:
    """Block-max pooled thumbnails of every layer and head of ``part``, quantised on one scale.

    scale : "max" (0..largest weight anywhere in the grid) or "unit" (0..1).
    """
    L, H = n_layers_of(trace, part), trace.n_heads
    _, tq, tk = trace[_prefix(part, 0) + "probs"].shape  # (H, Tq, Tk)
    kr, kc = pool_factor(tq, thumb_px), pool_factor(tk, thumb_px)
    pooled = None
    for layer in range(L):
        probs = trace[_prefix(part, layer) + "probs"]  # (H, Tq, Tk)
        for h in range(H):
            img = block_max(probs[h], kr, kc)
            if pooled is None:
                pooled = np.empty((L, H) + img.shape, np.float32)
            pooled[layer, h] = img
    max_weight = pooled.max(axis=(2, 3))  # (L, H)
    vmax = float(max_weight.max()) if scale == "max" else 1.0
    masked = masked_cells(trace, _prefix(part, 0))
    masked = None if masked is None else block_all(masked, kr, kc)
    images = quantize(pooled, vmax if vmax > 0 else 1.0,
                      None if masked is None else np.broadcast_to(masked, pooled.shape))
    return Thumbnails(images=images, vmax=vmax if vmax > 0 else 1.0, max_weight=max_weight, pool=(kr, kc))


def summarize_stats(trace, part: str = "self") -> HeadStats:
    """Entropy (nats) and mean attention distance per layer and head of ``part``.

    Distances are in pixels for a vision transformer, in tokens for text; cross-attention has no
    common positions for queries and keys, so its distance is None.
    """
    # a Trace is walked one layer at a time by the analyses; a list would hold every layer at once
    probs = trace if part == "self" else trace.all_probs(part)
    entropy = attention_entropy(probs)
    if part == "cross":
        return HeadStats(entropy, None, "")
    distance = mean_attention_distance(probs)
    unit = "px" if part == "self" and trace.grid is not None else "tokens"
    return HeadStats(entropy, distance, unit)
