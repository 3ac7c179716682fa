"""One head's max-pooled overview and statistics of a long input, from the trace's on-demand probabilities.

Numpy only (no Qt): the All heads grid runs :func:`page_overviews` on the views' lane for the page of heads on
screen (and the command line's export of it, at once). A long trace keeps q, k and each row's log-sum-exp and recomputes probabilities block by block
(:meth:`Trace.probs`), so each head costs every weight of its map once (about a CPU-second at 4,096 tokens):
the grid computes only the heads it shows, one at a time, and each arrives on its own.

Each cell is the *maximum* of its kr × kc block of the map (as the grid's other thumbnails and the head map),
so one key every query attends to with weight 1.0 stays a full-colour column at any pooling; a mean would
dilute it to 1/kc.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from attnviz.analysis.block_pool import block_all, block_all_into, block_max_into, pool_factor
from attnviz.analysis.distance import distance_sums, entropy_sums
from attnviz.analysis.trace_head_scores import rows_per_block
from attnviz.analysis.trace_parts import masked_cells

__all__ = ["HeadOverview", "overview_pool", "head_overview", "page_overviews", "pooled_mask", "THUMB_PX"]

THUMB_PX = 64  # cells a side of a thumbnail (as model_summary.pool_maps' default)


@dataclass
class HeadOverview:
    """``pooled`` (s_rows, s_cols) float32 block maxima; ``entropy`` nats (mean over queries); ``distance``
    mean attention distance (None for cross-attention)."""

    layer: int
    head: int
    pooled: np.ndarray
    entropy: float
    distance: float | None


def overview_pool(trace, part: str, thumb_px: int = THUMB_PX) -> tuple[int, int]:
    """(kr, kc): map rows and columns pooled into one cell of a ``thumb_px``-cell thumbnail."""
    _, tq, tk = trace.probs_shape(0, part)
    return pool_factor(tq, thumb_px), pool_factor(tk, thumb_px)


def head_overview(trace, layer: int, part: str, head: int, thumb_px: int = THUMB_PX,
                  stop: Callable[[], bool] = lambda: False) -> HeadOverview | None:
    """Head ``head`` of ``layer`` max-pooled to at most ``thumb_px`` cells a side, with its entropy and mean
    distance, streamed over blocks of whole pooling rows (memory O(block · T_k), never T × T). None when
    ``stop()`` turns True between blocks (the page it was for is no longer shown)."""
    _, tq, tk = trace.probs_shape(layer, part)
    kr, kc = overview_pool(trace, part, thumb_px)
    # bands bounded in rows × keys whatever kr is (whole kr-row blocks at 131,072 tokens were 2,048 × 131,072
    # weights, ~10 GB with their float64 statistics); a block cut by a band's edge is completed by the next
    step = rows_per_block(1, tk)
    pooled = np.zeros((-(-tq // kr), -(-tk // kc)), np.float32)
    # distances in tokens: text only (an image's are in pixels between patches, which this does not compute)
    with_distance = part != "cross" and getattr(trace, "grid", None) is None
    ent, dist, counted = 0.0, 0.0, 0
    for r0 in range(0, tq, step):
        if stop():
            return None
        block = trace.probs(layer, part, heads=head, rows=slice(r0, min(tq, r0 + step)))  # (1, r, Tk)
        block_max_into(pooled, block[0], r0, kr, kc)
        wide = np.asarray(block, dtype=np.float64)
        ent += float(entropy_sums(wide)[0])
        if with_distance:  # text positions (|i − j| tokens): a long input is text
            total, n = distance_sums(wide, np.arange(r0, r0 + block.shape[1]), None)
            dist, counted = dist + float(total[0]), counted + n
    return HeadOverview(layer, head, pooled, ent / tq, dist / max(counted, 1) if with_distance else None)


def page_overviews(trace, part: str, heads: Iterable[tuple[int, int]], thumb_px: int = THUMB_PX,
                   stop: Callable[[], bool] = lambda: False):
    """Generator: :func:`head_overview` of each (layer, head) in order, until ``stop()``."""
    for layer, head in heads:
        done = head_overview(trace, layer, part, head, thumb_px, stop)
        if done is None:
            return
        yield done


def pooled_mask(trace, part: str, kr: int, kc: int, step: int, layer: int = 0) -> np.ndarray | None:
    """The kr × kc blocks of ``part``'s map every cell of which the mask blocks (None: no mask), as the grid's
    thumbnails and the HTML page draw them masked. The grid reads layer 0's (the views' layers share one mask);
    the page asks each layer's (``layer``: a sliding-window layer's differs). A mask computed on demand (a long
    input) is read in bands of at most ``step`` rows bounded in rows × keys, never whole."""
    from attnviz.capture.trace import layer_prefix

    prefix = layer_prefix(layer, part)
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
