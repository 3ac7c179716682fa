"""Rotary positions and the other parts modern attention adds to the score, recomputed in float64 from a Trace.

Rotary models (Llama, Qwen, Gemma, Mistral, Phi-3, GPT-NeoX …) put no position vector into the
residual stream: they turn q and k by an angle proportional to the position, pairwise over dimensions
(transformers' ``rotate_half``: dimension d pairs with d + d_rot/2, d_rot ≤ d_head; the rest are left
alone), with the model's own cos/sin tables (``L{i}.rope_cos``/``rope_sin``, one row per position).
Turning q by θ·i and k by θ·j multiplies their dot product by a turn of θ·(j − i): the score depends on
the positions only through their distance. :func:`scores_by_distance` computes it that way, from the
*unrotated* q and k and the table row of the distance alone, for comparison with the model's scores.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rotate", "scores_by_distance", "RotaryParts", "rotary_parts"]


def rotate(t: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate (…, dh) rows by the (…, d_rot) cos/sin rows (rotate_half convention)."""
    d = cos.shape[-1]
    half = d // 2
    rot, rest = t[..., :d], t[..., d:]
    turned = np.concatenate((-rot[..., half:], rot[..., :half]), axis=-1)
    return np.concatenate((rot * cos + turned * sin, rest), axis=-1)


def scores_by_distance(q_i: np.ndarray, k: np.ndarray, i: int, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """q_i · k_j with the rotation applied once, to k_j, by the table row of the distance |j − i|.

    q_i (dh,) and k (Tk, dh) before rotation. The tables may carry a constant factor a (long-context
    scaling: cos = a·cos θ): row 0 gives it, and the product of two rotated vectors carries a², the one
    rotation here a, so the rotated dimensions are multiplied by a once more.
    """
    d = cos.shape[-1]
    a = float(cos[0, 0]) if cos.size else 1.0
    out = np.empty(k.shape[0])
    for j in range(k.shape[0]):
        dist = j - i
        c, s = cos[abs(dist)], sin[abs(dist)] * (1.0 if dist >= 0 else -1.0)
        turned = rotate(k[j][None], c[None], s[None])[0]  # k_j turned by the angle of the distance
        out[j] = a * float(q_i[:d] @ turned[:d]) + float(q_i[d:] @ k[j, d:])  # unrotated dimensions as they are
    return out


class RotaryParts:
    """The rotary step of one query of one head (float64): before/after rotation and the distance check."""

    def __init__(self, q_pre: np.ndarray, k_pre: np.ndarray, cos_i: np.ndarray, sin_i: np.ndarray, dims: int,
                 q_rot: np.ndarray, k_rot: np.ndarray, by_distance: np.ndarray, distance: np.ndarray):
        self.q_pre, self.k_pre, self.cos_i, self.sin_i, self.dims = q_pre, k_pre, cos_i, sin_i, dims
        self.q_rot, self.k_rot, self.by_distance, self.distance = q_rot, k_rot, by_distance, distance


def rotary_parts(trace, prefix: str, q_pre_i: np.ndarray, k_pre: np.ndarray, query: int) -> RotaryParts | None:
    """Rotate a query row and the key rows with the trace's tables (None when the model does not rotate)."""
    if prefix + "rope_cos" not in trace:
        return None
    cos = np.asarray(trace[prefix + "rope_cos"], dtype=np.float64)  # (T, d_rot)
    sin = np.asarray(trace[prefix + "rope_sin"], dtype=np.float64)
    q_rot = rotate(q_pre_i[None], cos[query][None], sin[query][None])[0]
    k_rot = rotate(k_pre, cos[: k_pre.shape[0]], sin[: k_pre.shape[0]])
    by_distance = scores_by_distance(q_pre_i, k_pre, query, cos, sin)
    return RotaryParts(q_pre_i, k_pre, cos[query], sin[query], cos.shape[-1], q_rot, k_rot, by_distance,
                       np.arange(k_pre.shape[0]) - query)
