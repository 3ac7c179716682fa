"""Head scores of one captured input, streamed over blocks of query rows of :meth:`Trace.probs`.

A long input's probabilities are recomputed on demand from q, k and each row's log-sum-exp
(:mod:`attnviz.capture.on_demand`); scoring them never asks for a layer's whole (H, T, T) map. Each block of
rows goes through :func:`attnviz.analysis.head_scores.row_scores` (the one definition of every score) and only
per-head sums and row counts are kept, so memory is O(H · block rows · T) whatever the length, and the result
equals :func:`~attnviz.analysis.head_scores.per_input_scores` on the whole map.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.head_scores import row_scores

__all__ = ["stream_input_scores", "token_ids", "rows_per_block", "BLOCK_CELLS"]

# a block of rows holds at most this many (head × row × key) weights: 16 MB of float64, a few such temporaries
BLOCK_CELLS = 1 << 21


def rows_per_block(heads: int, keys: int, cells: int = BLOCK_CELLS) -> int:
    """How many query rows of ``heads`` × ``keys`` weights fit in one block of ``cells``."""
    return max(1, cells // max(1, heads * keys))


def token_ids(tokens) -> np.ndarray:
    """(1, T) integer ids of the token strings: equal strings, equal ids (repeats for duplicate/induction)."""
    return np.unique(np.asarray(list(tokens), dtype=object).astype(str), return_inverse=True)[1].reshape(1, -1)


def stream_input_scores(trace, layer: int, part: str = "self", ids=None, distances=None, spatial=None,
                        wanted=("previous_token", "duplicate_token", "induction", "first_token", "entropy",
                                "distance"),
                        block_cells: int = BLOCK_CELLS) -> dict[str, np.ndarray]:
    """One input's score per head of one layer, ``{name: (1, H)}``, streamed over blocks of query rows.

    Parameters
    ----------
    trace : a :class:`~attnviz.capture.Trace` (short or long: read through ``trace.probs`` only).
    layer, part : which attention block ("self", "enc" or "cross").
    ids : (1, T) token ids (self-attention: duplicate-token and induction need them; :func:`token_ids`).
    distances : (T, T) distances between positions (images); None: |i - j| tokens, built per block.
    spatial : (T,) bool, positions with a place (False for an image's CLS).
    wanted : the scores to compute (the ones a cross-attention map cannot have are skipped).
    block_cells : the most (head × row × key) weights one block holds.

    Returns
    -------
    ``{name: (1, H) float64}``, NaN for a head whose score has no eligible row (as ``per_input_scores``).
    """
    H, tq, tk = trace.probs_shape(layer, part)
    square = part != "cross"
    q_valid = np.ones((1, tq), dtype=bool)
    k_valid = None if square else np.ones((1, tk), dtype=bool)
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    step = rows_per_block(H, tk, block_cells)
    for r0 in range(0, tq, step):
        rows = np.arange(r0, min(tq, r0 + step))
        block = trace.probs(layer, part, rows=slice(r0, r0 + len(rows)))  # (H, r, Tk)
        A = np.asarray(block, dtype=np.float64)[None]  # (1, H, r, Tk)
        found = row_scores(A, rows, q_valid, k_valid, ids if square else None, distances if square else None,
                           spatial if square else None, wanted, square=square)
        for name, (values, eligible) in found.items():
            sums[name] = sums.get(name, 0.0) + (values * eligible[:, None, :]).sum(-1)  # (1, H)
            counts[name] = counts.get(name, 0) + eligible.sum(-1)  # (1,)
    out = {}
    for name, total in sums.items():
        n = np.asarray(counts[name], dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = total / n[:, None]
        value[n == 0] = np.nan
        out[name] = value
    return out
