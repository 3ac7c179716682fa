"""Long traces for the HTML page's tests: probabilities defined per cell and built per block as asked.

``ColumnTrace`` answers the access contract (``probs_shape``, ``probs`` with heads/rows/cols) by
computing the block asked for, so a 3,000-token page can be built in a test without a T×T anywhere, and
records the largest block it was asked for (a page builder that asks for a whole layer is caught).
"""

from __future__ import annotations

import numpy as np

from attnviz.capture.trace import Trace


def _axis(sel, n: int) -> np.ndarray:
    if sel is None:
        return np.arange(n)
    if isinstance(sel, (int, np.integer)):
        return np.array([int(sel)])
    return np.arange(n)[sel] if isinstance(sel, slice) else np.asarray(sel, dtype=np.intp)


class ColumnTrace(Trace):
    """An encoder-like trace whose head h puts weight 1.0 on key ``columns[h]`` for every query.

    (Rows do not sum to one: the test asks whether a single large column survives pooling, not softmax.)
    """

    def __init__(self, T: int, n_layers: int, columns: list[int]):
        super().__init__(tokens=[f"t{i}" for i in range(T)],
                         meta={"kind": "encoder", "n_layers": n_layers, "n_heads": len(columns), "grid": None,
                               "model_name": "columns", "input_text": "word " * T})
        self.columns = np.asarray(columns)
        self.largest_block = 0  # cells of the largest block asked for

    def probs_shape(self, layer: int, part: str = "self") -> tuple[int, int, int]:
        return len(self.columns), len(self.tokens), len(self.tokens)

    def probs(self, layer: int, part: str = "self", heads=None, rows=None, cols=None) -> np.ndarray:
        T = len(self.tokens)
        h, i, j = _axis(heads, len(self.columns)), _axis(rows, T), _axis(cols, T)
        self.largest_block = max(self.largest_block, h.size * i.size * j.size)
        hit = self.columns[h][:, None, None] == j[None, None, :]  # (h, 1, c)
        return np.broadcast_to(hit, (h.size, i.size, j.size)).astype(np.float32)


def near_uniform_causal(T: int, n_heads: int = 2, seed: int = 0) -> Trace:
    """A causal trace whose rows are close to uniform (logits of spread 0.5, as a random model's):
    at 1,500 tokens most weights are ~1/1,500, far below a map's maximum (row 0's weight of 1.0)."""
    rng = np.random.default_rng(seed)
    mask = np.triu(np.full((T, T), -np.inf, np.float32), 1)  # (T, T) additive causal mask
    probs = np.empty((n_heads, T, T), np.float32)
    for h in range(n_heads):
        s = rng.standard_normal((T, T), dtype=np.float32) * np.float32(0.5) + mask
        s -= s.max(axis=1, keepdims=True)
        np.exp(s, out=s)
        probs[h] = s / s.sum(axis=1, keepdims=True)
    meta = {"kind": "decoder", "n_layers": 1, "n_heads": n_heads, "grid": None, "model_name": "near-uniform"}
    return Trace(tokens=[f"t{i}" for i in range(T)], meta=meta, arrays={"L0.probs": probs, "L0.mask": mask})
