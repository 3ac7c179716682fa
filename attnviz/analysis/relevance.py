"""Gradient-weighted attention rollout (Chefer, Gur & Wolf 2021, "Generic Attention-model Explainability").

Plain rollout treats every head alike. Chefer et al. weight each head's attention by the gradient of
the target logit with respect to it and keep only the positive part, so heads that push the
prediction up count and heads that push it down do not:

    Ā_l = mean_h (∇A_l ⊙ A_l)⁺          R ← R + Ā_l · R,   R starts as I

Row i of R is the relevance of each input token for position i (row 0 is the CLS token of a
classifier, the last row is the predicted next token of a decoder).
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.rollout import ProbLayers
from attnviz.capture.trace import layer_prefix
from attnviz.errors import InputError

__all__ = ["compute_grad_rollout", "gradient_heads"]


def gradient_heads(probs: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """One layer's head-averaged positive gradient × attention, (H, Tq, Tk) × 2 → (Tq, Tk)."""
    probs = np.asarray(probs, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    if probs.shape != grad.shape:
        raise InputError(f"gradient shape {grad.shape} does not match attention shape {probs.shape}")
    return np.clip(grad * probs, 0.0, None).mean(axis=0)


def compute_grad_rollout(probs, grads=None, start_layer: int = 0, part: str = "self") -> np.ndarray:
    """Chefer et al. relevance: R = Π (I + Ā_l) over layers ``start_layer`` … L-1, applied bottom up.

    Parameters
    ----------
    probs : list of (H, T, T) attention probabilities per layer, or a Trace captured with ``grad=True``.
    grads : list of (H, T, T) gradients d(target logit)/d(probs); read from the Trace (``L{i}.grad``)
        when None.
    start_layer : first layer that contributes; earlier layers count as identity.
    part : "self" or "enc" when reading from a Trace.

    Returns
    -------
    (T, T) float64 relevance map (rows are not normalised; R - I holds the attention's share).
    """
    if grads is None:
        if not hasattr(probs, "all_probs"):
            raise InputError("gradient rollout needs the gradients: pass grads or a Trace captured with grad=True")
        n = probs.layers_in(part)
        keys = [layer_prefix(i, part) + "grad" for i in range(n)]
        if any(k not in probs for k in keys):
            raise InputError("this trace has no attention gradients: capture it with grad=True (attnviz trace --grad)")
        grads = [probs[k] for k in keys]
    layers = ProbLayers(probs, part)
    if len(grads) != len(layers):
        raise InputError(f"{len(grads)} gradient layers for {len(layers)} attention layers")
    if not 0 <= start_layer < len(layers):
        raise InputError(f"start layer {start_layer} is out of range 0..{len(layers) - 1}")
    R = None
    for i in range(start_layer, len(layers)):
        cam = gradient_heads(layers[i], grads[i])  # (T, T)
        if cam.shape[0] != cam.shape[1]:
            raise InputError("gradient rollout needs square self-attention")
        R = np.eye(cam.shape[0]) if R is None else R
        R = R + cam @ R
    return R
