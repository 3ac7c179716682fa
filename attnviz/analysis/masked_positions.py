"""What each [MASK] of a masked-language-model trace looks at and what it guesses. Qt-free.

Reads only the trace: the prediction rows (T, V) the model computed at the [MASK] positions and the
attention rows of every layer and head from those positions. Nothing is re-run or estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MaskRow", "mask_rows", "MASK_TOKEN"]

MASK_TOKEN = "[MASK]"


@dataclass
class MaskRow:
    """One [MASK] position: its guesses and where it looked.

    ``attention`` is (L, H, T): row ``position`` of every layer's and head's map. ``head`` is the
    (layer, head) whose row is most concentrated (the largest single weight on a token other than the
    [MASK] itself); ``looks_at`` its (token index, weight) pairs, largest first.
    """

    position: int
    guesses: list[tuple[str, float]]
    attention: np.ndarray
    head: tuple[int, int]
    looks_at: list[tuple[int, float]]


def mask_rows(trace, top_k: int = 5, top_tokens: int = 3) -> list[MaskRow]:
    """One :class:`MaskRow` per [MASK] token of ``trace``, in order; [] when there is none.

    The guesses are the ``top_k`` most probable words of the trace's prediction row at that position,
    named by ``trace.meta["labels"]`` (the vocabulary the task stores there); empty when the model's
    prediction is not one distribution per position (a classifier)."""
    tokens = list(trace.tokens)
    where = [i for i, t in enumerate(tokens) if t == MASK_TOKEN]
    if not where:
        return []
    # a word per position only from a per-token head (T, V); a classifier's (C,) names no word: no guesses
    shape = trace.shape("prediction") if "prediction" in trace else ()
    per_token = len(shape) == 2 and shape[0] == len(tokens)
    labels = list(trace.description.labels or [])
    out = []
    for q in where:
        guesses = []
        if per_token:
            p = np.asarray(trace.row("prediction", q), dtype=np.float64)  # (V,)
            order = np.argsort(-p, kind="stable")[:top_k]
            guesses = [(labels[i] if i < len(labels) else str(int(i)), float(p[i])) for i in order]
        rows = np.stack([trace.probs(layer, rows=q)[:, 0, :] for layer in range(trace.n_layers)])  # (L, H, T)
        others = rows.copy()
        others[:, :, q] = 0.0  # a [MASK] reading itself tells nothing about the word
        flat = int(np.argmax(others.max(-1)))
        layer, head = divmod(flat, rows.shape[1])
        row = rows[layer, head]
        top = [int(i) for i in np.argsort(-row, kind="stable")[:top_tokens]]
        out.append(MaskRow(q, guesses, rows, (layer, head), [(i, float(row[i])) for i in top]))
    return out
