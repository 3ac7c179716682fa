"""Is self-attention permutation equivariant? Compare the traces of an input and of its shuffle.

Without positional encoding, shuffling the input tokens shuffles every attention map the same way:
with R the permutation matrix (row i of R picks input position perm[i]),

    A(R X) = R A(X) Rᵀ

so the attention of the permuted input equals the original attention with rows and columns permuted.
A positional encoding breaks this — that is why transformers need one. A classifier that pools by the
mean is then also permutation invariant. (A causal decoder is never equivariant: the mask is not.)
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError

__all__ = ["compare_permuted", "permutation_matrix"]


def permutation_matrix(perm) -> np.ndarray:
    """R with R[i, perm[i]] = 1, so (R X)[i] = X[perm[i]]."""
    perm = np.asarray(perm)
    R = np.zeros((len(perm), len(perm)))
    R[np.arange(len(perm)), perm] = 1.0
    return R


def compare_permuted(orig, shuffled, perm) -> dict:
    """Compare the traces of an input and of its permutation ``perm`` (the permuted input is ``x[perm]``).

    Parameters
    ----------
    orig, shuffled : Traces (or anything with ``all_probs()`` and ``["prediction"]``) of the two inputs.
    perm : the permutation of 0 … T-1 that made the second input.

    Returns
    -------
    dict with
      ``max_error_equivariant`` – max |A(permuted) − R A(original) Rᵀ| over all layers and heads;
      ``probs_orig``, ``probs_perm``, ``probs_expected`` – per layer (H, T, T) float64 arrays;
      ``prediction_orig``, ``prediction_perm`` and ``max_error_invariant`` (max |Δ prediction|; only
      meaningful for a sequence-level output such as mean-pooled classification).
    """
    perm = np.asarray(perm, dtype=np.int64)
    T = len(perm)
    if perm.ndim != 1 or not np.array_equal(np.sort(perm), np.arange(T)):
        raise InputError(f"{perm.tolist()} is not a permutation of 0..{T - 1}")
    R = permutation_matrix(perm)
    probs_orig = [p.astype(np.float64) for p in orig.all_probs()]
    probs_perm = [p.astype(np.float64) for p in shuffled.all_probs()]
    if any(p.shape[-1] != T for p in probs_orig + probs_perm):
        raise InputError(f"the permutation has {T} positions but the traces have {probs_orig[0].shape[-1]}")
    expected = [R @ p @ R.T for p in probs_orig]  # (H, T, T), the same R on every head
    error = max(float(np.max(np.abs(a - b))) for a, b in zip(probs_perm, expected))
    pred_o, pred_p = orig["prediction"].astype(np.float64), shuffled["prediction"].astype(np.float64)
    return {
        "max_error_equivariant": error,
        "probs_orig": probs_orig,
        "probs_perm": probs_perm,
        "probs_expected": expected,
        "prediction_orig": pred_o,
        "prediction_perm": pred_p,
        "max_error_invariant": float(np.max(np.abs(pred_o - pred_p))) if pred_o.shape == pred_p.shape else float("nan"),
    }
