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

__all__ = ["random_spread", "softmax_stats", "random_rows", "head_scores", "scale_reason", "D_KS", "MAX_KEYS"]


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
    """Softmax over ``T`` keys of random q·k at ``d_k``: {"scaled": stats, "raw": stats} (softmax_stats).

    The keys are drawn a block of rows at a time (the same stream as one (n, T, d_k) draw): whole, they were
    2 MB per key at d_k 512, a gigabyte at 512 keys."""
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((n, d_k))
    block = max(1, _RANDOM_BLOCK_CELLS // max(1, T * d_k))
    dots = np.concatenate([np.einsum("nd,ntd->nt", queries[i:i + block],
                                     rng.standard_normal((min(block, n - i), T, d_k)))
                           for i in range(0, n, block)])  # (n, T)
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


D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)  # the d_k axis of the figure
# random keys are drawn this many numbers at a time (float64: 32 MiB)
_RANDOM_BLOCK_CELLS = 1 << 22
# the figure scores the head's own keys whole (T × T, float64) and a softmax over T random keys per d_k:
# beyond this many keys it is refused in one line rather than take gigabytes and minutes
MAX_KEYS = 2048


def scale_reason(trace, layer: int, head: int, part: str = "self", seed: int = 0, n: int = 2000) -> dict:
    """The numbers of the √d_k figure for one head of ``trace``.

    Random vectors at every d_k of :data:`D_KS`: the std of q·k unscaled and scaled, and over the head's
    own number of keys the softmax's mean top weight and gradient norm, unscaled and scaled. This head
    on this input: its d_k, the std of its raw q·k over the cells it may use, and its rows' top weight and
    gradient norm with its scale and without.
    """
    from attnviz.capture.trace import layer_prefix

    from attnviz.errors import InputError

    pre = layer_prefix(layer, part)
    n_keys = trace.probs_shape(layer, part)[-1]
    if n_keys > MAX_KEYS:
        raise InputError(f"the √d_k figure works on inputs of up to {MAX_KEYS:,} keys (this one has {n_keys:,}): "
                         "shorten the input, or read the head's scale in the walkthrough")
    q = np.asarray(trace[pre + "q"], np.float64)  # (H, Tq, d)
    k = np.asarray(trace[pre + "k"], np.float64)  # (H_kv, Tk, d)
    mask = np.asarray(trace[pre + "mask"], np.float64).reshape(q.shape[1], k.shape[1])
    scores, valid = head_scores(q[None], k[None], mask[None, None], head)
    scores, valid = scores[0], valid[0]
    d_k, T = q.shape[-1], k.shape[1]
    scale = float(trace.description.scale)
    spread = random_spread(D_KS, n=n, seed=seed)
    rows = {d: random_rows(d, T, n=n // 4, seed=seed) for d in D_KS}
    out = {"d_ks": list(D_KS), "keys": T, "d_k": d_k, "scale": scale, "layer": layer, "head": head,
           "spread_raw": [spread[d][0] for d in D_KS], "spread_scaled": [spread[d][1] for d in D_KS]}
    for name in ("raw", "scaled"):
        out[f"top_{name}"] = [rows[d][name][0] for d in D_KS]
        out[f"grad_{name}"] = [rows[d][name][1] for d in D_KS]
    out["head_spread_raw"] = float(scores[valid].std())
    out["head_spread_scaled"] = float((scores * scale)[valid].std())
    out["head_top_scaled"], out["head_grad_scaled"] = softmax_stats(scores * scale, valid)
    out["head_top_raw"], out["head_grad_raw"] = softmax_stats(scores, valid)
    return out
