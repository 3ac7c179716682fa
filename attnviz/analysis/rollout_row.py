"""One row of attention rollout, streamed over row blocks of each layer: never a (T, T) matrix.

Row q of rollout = e_qᵀ · Â_L · … · Â_start (see :mod:`attnviz.analysis.rollout`). A row vector times
Â_l needs only the rows i of Â_l where the vector is non-zero, and each row of Â_l is one row of the
fused, mixed, renormalised attention — so each layer is read in blocks of ``chunk_rows`` query rows
through ``Trace.probs(layer, part, rows=…)`` (a causal model's vector is zero past q: those rows are
never asked for). Memory O(H · chunk · T); work O(T²) per layer at most. The "discard the lowest
weights" option ranks the whole matrix, so it is refused here in one line.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.rollout import FUSIONS
from attnviz.errors import InputError

__all__ = ["rollout_row", "LONG_ROLLOUT_T"]

LONG_ROLLOUT_T = 2048  # above this many tokens a trace's rollout is computed one row at a time


def rollout_row(trace, query: int, fusion: str = "mean", residual: float = 0.5, start_layer: int = 0,
                part: str = "self", discard: float = 0.0, chunk_rows: int = 256) -> np.ndarray:
    """Row ``query`` of :func:`attnviz.analysis.rollout.compute_rollout` (float64, (T,)), streamed.

    Raises
    ------
    InputError : discard > 0 (needs the whole matrix), a fusion, residual, layer or query out of range,
        or attention that is not square.
    """
    if discard:
        raise InputError("discarding the lowest weights ranks every weight of a layer: not available on a "
                         f"long input (above {LONG_ROLLOUT_T:,} tokens); set discard to 0")
    if fusion not in FUSIONS:
        raise InputError(f"head fusion {fusion!r} must be one of {', '.join(FUSIONS)}")
    if not 0.0 <= residual <= 1.0:
        raise InputError(f"residual weight {residual} must be in [0, 1]")
    n = trace.layers_in(part)
    if not 0 <= start_layer < n:
        raise InputError(f"start layer {start_layer} is out of range 0..{n - 1}")
    _, tq, tk = trace.probs_shape(start_layer, part)
    if tq != tk:
        raise InputError("rollout needs square self-attention of one length in every layer")
    if not 0 <= query < tq:
        raise InputError(f"query {query} does not exist: the input has positions 0..{tq - 1}")
    v = np.zeros(tq)  # (T,) the row so far: e_q
    v[query] = 1.0
    for layer in range(n - 1, start_layer - 1, -1):  # e_qᵀ · Â_L first: the last layer acts on the left
        out = np.zeros(tq)
        live = np.flatnonzero(v)
        for r0 in range(int(live.min()), int(live.max()) + 1, chunk_rows):
            r1 = min(r0 + chunk_rows, tq)
            if not v[r0:r1].any():
                continue
            fused = getattr(np, fusion)(trace.probs(layer, part, rows=slice(r0, r1)).astype(np.float64), axis=0)
            mixed = (1.0 - residual) * fused  # (r, T)
            mixed[np.arange(r1 - r0), np.arange(r0, r1)] += residual
            sums = mixed.sum(axis=1, keepdims=True)
            mixed = np.divide(mixed, sums, out=np.zeros_like(mixed), where=sums > 0)
            out += v[r0:r1] @ mixed
        v = out
    return v
