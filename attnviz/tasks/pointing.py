"""The pointing game: does a ViT's attention rollout peak on the object it classifies?

For each image the CLS row of the attention rollout (:func:`attnviz.analysis.rollout.compute_rollout`,
default settings) is taken over the patches; its maximum is a "hit" when that patch overlaps the
object mask (Zhang et al., "Top-down neural attention by excitation backprop", 2016, counted per patch).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["classify_and_point", "patch_hits"]


@torch.no_grad()
def classify_and_point(model, images: torch.Tensor, chunk: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Predicted classes (N,) and the patch (N,) where the CLS rollout peaks, 0-based over the patches.

    ``images`` is a normalised (N, C, S, S) batch on the model's device; one explicit forward pass per
    chunk gives both the logits and every layer's attention.
    """
    from attnviz.analysis.rollout import compute_rollout
    from attnviz.capture.batch import batch_attention

    preds, peaks = [], []
    for start in range(0, len(images), chunk):
        logits, by_part = batch_attention(model, {"images": images[start : start + chunk]})
        probs = by_part["self"]  # L × (B, H, T, T)
        preds.append(logits.argmax(-1).cpu().numpy())
        for i in range(len(logits)):
            roll = compute_rollout([p[i] for p in probs])  # (T, T)
            peaks.append(int(roll[0, 1:].argmax()))  # CLS row, patches only
    return np.concatenate(preds), np.asarray(peaks, dtype=np.int64)


def patch_hits(peaks: np.ndarray, masks: np.ndarray, patch: int) -> np.ndarray:
    """(N,) bool: whether patch ``peaks[i]`` (row-major over the grid) overlaps ``masks[i]`` (N, S, S)."""
    n, s, _ = masks.shape
    g = s // patch
    per_patch = masks.reshape(n, g, patch, g, patch).any(axis=(2, 4)).reshape(n, g * g)  # (N, patches)
    return per_patch[np.arange(n), peaks]
