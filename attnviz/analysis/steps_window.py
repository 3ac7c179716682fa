"""The walkthrough of a long input: its numbers for a window of keys around the query, and which window.

A step whose grids have one row per key cannot show 16,384 of them. :func:`key_window` keeps the per-key
arrays of :class:`~attnviz.analysis.steps.SixSteps` for keys [a, b) around the query and says so
(``key_offset``, ``n_keys``); everything else (q_i, the softmax's normaliser, z_i = Σ over *all* keys,
the errors against the model) is computed over every key before the cut, so the numbers shown are the
model's, not a softmax of the window. :func:`position_window` is the one rule for where the window lies
(the walkthrough's steps, its token strip and the matrix form use it).
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["position_window", "key_window", "STEP_KEYS"]

STEP_KEYS = 64  # keys shown per step of a long input (grids of numbers: beyond ~40 rows they become heatmaps)

# SixSteps fields with one entry per key along their first axis
_PER_KEY = ("k", "v", "scores", "scaled", "mask", "masked", "weights", "weighted", "weights_trace", "k_pre_rope",
            "distance", "scores_by_distance", "capped", "bias")


def position_window(n: int, centre: int | None, size: int) -> tuple[int, int]:
    """[a, b): ``size`` positions of ``n`` around ``centre`` (all of them when n ≤ size), moved inside 0..n."""
    if n <= size:
        return 0, n
    c = 0 if centre is None else int(centre)
    a = min(max(c - size // 2, 0), n - size)
    return a, a + size


def key_window(steps, size: int = STEP_KEYS):
    """``steps`` with its per-key arrays cut to ``size`` keys around the query (unchanged when there are
    no more keys than that). The result's ``key_offset`` is the first key's position and ``n_keys`` the
    number of keys the softmax ran over; its ``key_tokens`` are the window's."""
    n = len(steps.key_tokens)
    if n <= size:
        return steps
    centre = steps.query if steps.part != "cross" else n - 1
    a, b = position_window(n, min(centre, n - 1), size)
    # copies: a view would keep every key's (Tk, dh) arrays alive as long as the window is on screen
    cut = {name: np.array(np.asarray(getattr(steps, name))[a:b])
           for name in _PER_KEY if getattr(steps, name) is not None}
    return dataclasses.replace(steps, key_tokens=list(steps.key_tokens[a:b]), key_offset=a, n_keys=n, **cut)
