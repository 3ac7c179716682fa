"""Level-of-detail pyramids of one layer's heads, for a head map larger than the screen can show.

Numpy only (no Qt here; the prefetch asks the views' lane for a thread). Each head gets a
:class:`~attnviz.analysis.pyramid.MaxPyramid` (block maxima, so a one-token diagonal and the colour
scale's top survive every zoom); the layer's mask gets one pyramid of "some cell of the block is not
masked", so a block is drawn masked only when every one of its cells is. Level 0 of every pyramid is
the trace's own array (no copy); the levels above it add a third of a head, so the cache keeps as
many heads as ``budget_bytes`` allows and builds the others when asked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from attnviz.analysis.pyramid import MaxPyramid

__all__ = ["HeadPyramids", "MIN_SIDE"]

MIN_SIDE = 128  # the coarsest level's longest side: a small dock still gets about one value per pixel
DEFAULT_BUDGET = 512 * 2**20  # bytes of pooled levels kept across heads (T = 16,384: three heads)


class HeadPyramids:
    """Pyramids of the heads of one (H, Tq, Tk) attention array and of its (Tq, Tk) mask.

    ``get(h)`` returns head h's pyramid (building it now if the prefetch has not); ``prefetch()``
    builds the others off the GUI thread while they fit in the budget; ``cancel()`` stops it.
    """

    def __init__(self, probs: np.ndarray, masked: np.ndarray | None = None, budget_bytes: int = DEFAULT_BUDGET,
                 like: "HeadPyramids | None" = None):
        """like: the previous layer's pyramids; its mask pyramid is reused when the mask is the same array
        (every layer of a part shares one)."""
        self.probs = probs
        self.masked = masked
        self.budget = budget_bytes
        if like is not None and like.masked is masked:
            self.visible = like.visible
        else:
            # "not masked" pooled by max = "some cell of the block is visible"; padding counts as masked
            self.visible = None if masked is None or not masked.any() else MaxPyramid(~masked, MIN_SIDE)
        self._done: OrderedDict[int, MaxPyramid] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()
        self._cancelled = False

    @property
    def nbytes(self) -> int:
        """Bytes of pooled levels held (level 0 is the trace's own array and not counted)."""
        with self._lock:
            return sum(p.nbytes_extra for p in self._done.values())

    def get(self, head: int) -> MaxPyramid:
        """Head ``head``'s pyramid, built now on the calling thread if the prefetch has not reached it;
        the least recently shown heads are dropped while the pooled levels exceed the budget."""
        with self._lock:
            hit = self._done.get(head)
            if hit is not None:
                self._done.move_to_end(head)
                return hit
        pyr = MaxPyramid(self.probs[head], MIN_SIDE)
        with self._lock:
            self._done[head] = pyr
            self._done.move_to_end(head)
            while len(self._done) > 1 and sum(p.nbytes_extra for p in self._done.values()) > self.budget:
                self._done.popitem(last=False)  # the least recently shown head goes first
        return pyr

    def masked_block(self, level: int, r0: int, r1: int, c0: int, c1: int) -> np.ndarray | None:
        """(rows, cols) bool of the crop of ``level`` (block indices): True where every cell is masked."""
        if self.visible is None:
            return None
        return ~self.visible.levels[min(level, len(self.visible.levels) - 1)][r0:r1, c0:c1]

    def prefetch(self, first: int = 0):
        """Build the other heads' pyramids on the views' lane while they fit in the budget; returns the Job."""
        from attnviz.gui.workers import views_lane  # Qt: only when called from the GUI, never from a worker

        n = self.probs.shape[0]
        order = [(first + i) % n for i in range(1, n)]
        return views_lane().submit(None, self._fill, order)

    def _fill(self, order: list[int]) -> None:
        per_head = self.probs[0].nbytes / 3  # the levels above 0 add about a third of a head
        for h in order:
            if self._cancelled or self.nbytes + per_head > self.budget:
                return
            with self._lock:
                if h in self._done:
                    continue
            self.get(h)

    def cancel(self) -> None:
        """Stop a running prefetch at the next head (a new trace or layer arrived)."""
        self._cancelled = True
