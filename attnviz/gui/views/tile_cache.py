"""The long head map's computed tiles, kept within a byte budget, and the tiles of other levels one exact block gives.

Numpy only. A tile ``(level, i, j)`` holds the maxima of the 2^ℓ × 2^ℓ blocks of map rows
[i·S_ℓ, (i+1)·S_ℓ) × columns [j·S_ℓ, (j+1)·S_ℓ), with S_ℓ = ``tile_cells(ℓ)``·2^ℓ map rows a side: 256 for
levels 0-2, then 64·2^ℓ. Every S_ℓ is a power of two that never shrinks as ℓ grows, so a tile's block is covered
exactly by whole tiles of each finer level, and since the maximum of maxima is the maximum (each block rounded up
at the map's edge the same way):

* :meth:`TileCache.put_block` keeps, from the exact block computed for one tile, the tiles of every finer level
  that block covers (pooled 2 × 2 step by step; at levels 0-2 the very same 256 × 256 block): a zoom in finds them
  computed, where they cost as much again as the tile they came with;
* :meth:`TileCache.from_finer` pools a tile from finer tiles already kept, computing no probability: a zoom out.

A cache belongs to one map (layer, part, head): a new head or layer starts a new one, so nothing computed for
another map is ever reused (tests/gui/test_tile_reuse.py).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from attnviz.gui.views.heatmap_data import block_max

__all__ = ["TileCache", "TILE", "MIN_TILE_CELLS", "tile_cells", "tile_span"]

TILE = 256  # map rows (and columns) a side of one computed tile at the finest levels: 65,536 weights
# (a 512-row tile cost 18 ms median, 35 ms p95 on a busy machine; the tile nearest the centre comes first)
MIN_TILE_CELLS = 64  # cells a side of a tile at coarse levels (level 3: a 512 × 512 block)


def tile_cells(level: int) -> int:
    """Cells a side of a tile of ``level``: TILE map rows at fine levels, so a tile costs about the same."""
    return max(TILE >> level, MIN_TILE_CELLS)


def tile_span(level: int) -> int:
    """Map rows (and columns) a side of the block a tile of ``level`` covers (a power of two, non-decreasing)."""
    return tile_cells(level) << level


class TileCache(OrderedDict):
    """Tiles ``(level, i, j) -> (≤n, ≤n) float32`` of one map of ``tq`` × ``tk`` weights, least recently drawn
    first, evicted past ``budget`` bytes (a running count: summing them per store cost ~0.3 ms a tile).
    Not locked: :class:`~attnviz.gui.views.on_demand_map.OnDemandMap` holds its lock around every call."""

    def __init__(self, tq: int, tk: int, budget: int):
        super().__init__()
        self.tq, self.tk, self.budget = int(tq), int(tk), int(budget)
        self.bytes = 0

    def put(self, key: tuple[int, int, int], tile: np.ndarray) -> None:
        """Keep ``tile`` as the most recently used; drop the least recently used past the budget."""
        old = self.pop(key, None)
        self[key] = tile
        self.bytes += tile.nbytes - (old.nbytes if old is not None else 0)
        while len(self) > 1 and self.bytes > self.budget:
            self.bytes -= self.popitem(last=False)[1].nbytes

    def put_block(self, key: tuple[int, int, int], block: np.ndarray) -> np.ndarray:
        """Keep the tile ``key`` pooled from ``block`` (the exact weights of its map block, 2-D) and, older in
        the cache than it, the tiles of every finer level the block covers that are not kept yet; return the tile.
        """
        level, i, j = key
        span = tile_span(level)
        pooled = block  # the block at level ℓ' (ℓ' = 0, 1, ...): each step pools 2 × 2 cells
        for finer in range(level):
            n, k = tile_cells(finer), span // tile_span(finer)  # cells a finer tile; finer tiles a side
            for a in range(k):
                for b in range(k):
                    part = pooled[a * n:(a + 1) * n, b * n:(b + 1) * n]
                    sub = (finer, i * k + a, j * k + b)
                    if part.size and sub not in self:  # past the map's edge a block covers fewer finer tiles
                        self.put(sub, np.ascontiguousarray(part))
            pooled = block_max(pooled, 2, 2)
        self.put(key, pooled)
        return pooled

    def covering(self, key: tuple[int, int, int]) -> tuple[int, list[list[tuple[int, int, int]]]] | None:
        """(finer level, grid of keys) of the kept tiles of the finest level that together cover tile ``key``'s
        block, nearest level first; None when no finer level has all of them."""
        level, i, j = key
        span = tile_span(level)
        rows = min(span, self.tq - i * span)  # map rows of the block (fewer at the map's edge)
        cols = min(span, self.tk - j * span)
        if rows <= 0 or cols <= 0:
            return None
        for finer in range(level - 1, -1, -1):
            s = tile_span(finer)
            k = span // s
            grid = [[(finer, i * k + a, j * k + b) for b in range(-(-cols // s))] for a in range(-(-rows // s))]
            if all(sub in self for line in grid for sub in line):
                return finer, grid
        return None

    def from_finer(self, key: tuple[int, int, int]) -> np.ndarray | None:
        """Tile ``key`` pooled from kept finer tiles (no probability computed), or None when they are not all kept."""
        found = self.covering(key)
        if found is None:
            return None
        finer, grid = found
        joined = np.block([[self[sub] for sub in line] for line in grid])  # (cells of the finer level) 2-D
        g = 1 << (key[0] - finer)
        return block_max(joined, g, g)
