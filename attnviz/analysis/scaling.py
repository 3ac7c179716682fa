"""Why attention divides q·k by √d_k: the numbers behind the lecture's reason.

For q and k with independent unit-variance components, q·k is a sum of d_k products, so its spread
(standard deviation) grows like √d_k. Fed to a softmax unscaled, wide scores saturate it: one weight
near 1, the rest near 0, and the softmax's Jacobian diag(p) − ppᵀ (its gradient) near 0, so the
scores stop learning. Dividing by √d_k keeps the spread near 1 whatever d_k.

:func:`random_spread` measures this on random vectors, :func:`softmax_stats` gives the mean top weight
and mean Jacobian norm of rows of scores, and :func:`head_scores` collects one head's raw q·k from a
model's recorded queries and keys. Qt-free, numpy only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["random_spread", "softmax_stats", "random_rows", "head_scores"]


def random_spread(d_ks, n: int = 4000, seed: int = 0) -> dict[int, tuple[float, float]]:
    """d_k → (std of q·k, std of q·k/√d_k) over ``n`` pairs of standard-normal vectors."""
    rng = np.random.default_rng(seed)
    out = {}
    for d in d_ks:
        dots = np.einsum("nd,nd->n", rng.standard_normal((n, d)), rng.standard_normal((n, d)))
        out[int(d)] = (float(dots.std()), float((dots / np.sqrt(d)).std()))
    return out


def softmax_stats(scores: np.ndarray, valid: np.ndarray | None = None) -> tuple[float, float]:
    """(mean largest weight, mean Frobenius norm of the Jacobian diag(p) − ppᵀ) over rows of ``scores``
    (..., T); ``valid`` (same shape, bool) marks the keys a row may use (the others get weight 0)."""
    s = np.asarray(scores, np.float64)
    if valid is not None:
        s = np.where(valid, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    # ‖diag(p) − ppᵀ‖_F² = Σ p_i² (1 − 2 p_i) + (Σ p_i²)²
    sq = (p**2).sum(-1)
    jac = np.sqrt(np.maximum((p**2 * (1 - 2 * p)).sum(-1) + sq**2, 0.0))
    return float(p.max(-1).mean()), float(jac.mean())


def random_rows(d_k: int, T: int, n: int = 2000, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Softmax over ``T`` keys of random q·k at ``d_k``: {"scaled": stats, "raw": stats} (softmax_stats)."""
    rng = np.random.default_rng(seed)
    dots = np.einsum("nd,ntd->nt", rng.standard_normal((n, d_k)), rng.standard_normal((n, T, d_k)))
    return {"scaled": softmax_stats(dots / np.sqrt(d_k)), "raw": softmax_stats(dots)}


def head_scores(q: np.ndarray, k: np.ndarray, mask: np.ndarray, head: int) -> tuple[np.ndarray, np.ndarray]:
    """One head's raw scores q·k (B, T, T) from recorded ``q`` (B, H, T, d), ``k`` (B, H_kv, T, d) and the
    additive ``mask`` (broadcastable to (B, 1, T, T)); returns (scores, valid keys)."""
    group = q.shape[1] // k.shape[1]
    qh = np.asarray(q, np.float64)[:, head]
    kh = np.asarray(k, np.float64)[:, head // group]
    scores = qh @ np.swapaxes(kh, -1, -2)
    m = np.asarray(mask, np.float64)
    valid = np.broadcast_to(np.isfinite(m[:, 0] if m.ndim == 4 else m), scores.shape)
    return scores, valid
