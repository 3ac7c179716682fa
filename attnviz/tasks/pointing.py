"""The pointing game: does a ViT's attention rollout peak on the object it classifies?

For each image the CLS row of the attention rollout (:func:`attnviz.analysis.rollout.compute_rollout`,
default settings) is taken over the patches; its maximum is a "hit" when that patch overlaps the
object mask (Zhang et al., "Top-down neural attention by excitation backprop", 2016, counted per patch).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["classify_and_point", "patch_cover", "patch_hits", "pointing_baselines"]


@torch.no_grad()
def classify_and_point(model, images: torch.Tensor, chunk: int = 128, with_raw: bool = False) -> tuple:
    """Predicted classes (N,) and the patch (N,) where the CLS rollout peaks, 0-based over the patches.

    ``images`` is a normalised (N, C, S, S) batch on the model's device; one explicit forward pass per
    chunk gives both the logits and every layer's attention. ``with_raw`` adds a third array: the patch
    where the last layer's CLS attention (heads averaged) peaks.
    """
    from attnviz.analysis.rollout import compute_rollout
    from attnviz.capture.batch import batch_attention

    preds, peaks, raw = [], [], []
    for start in range(0, len(images), chunk):
        logits, by_part = batch_attention(model, {"images": images[start : start + chunk]})
        probs = by_part["self"]  # L × (B, H, T, T)
        preds.append(logits.argmax(-1).cpu().numpy())
        # the baseline rollout must beat: the last layer's own CLS row, heads averaged
        raw.append(np.asarray(probs[-1][:, :, 0, 1:].mean(1).argmax(-1)))
        for i in range(len(logits)):
            roll = compute_rollout([p[i] for p in probs])  # (T, T)
            peaks.append(int(roll[0, 1:].argmax()))  # CLS row, patches only
    if with_raw:
        return np.concatenate(preds), np.asarray(peaks, dtype=np.int64), np.concatenate(raw).astype(np.int64)
    return np.concatenate(preds), np.asarray(peaks, dtype=np.int64)


def pointing_baselines(peaks: np.ndarray, raw_peaks: np.ndarray, masks: np.ndarray, patch: int,
                       fit_masks: np.ndarray | None = None) -> dict:
    """The pointing game of rollout next to what it must beat, on the scenes of ``masks``.

    ``fixed``: the best model-free pointer, one patch for every scene (an upper bound of any "centre prior"),
    chosen on ``fit_masks`` (other scenes of the same kind; default ``masks`` themselves, which flatters it)
    and scored on ``masks``; ``fixed_patch`` is its row-major index. ``raw``: the last layer's [CLS] attention.
    ``chance``: a patch picked uniformly at random.
    """
    per_patch = patch_cover(masks, patch)  # (N, patches)
    fit = per_patch if fit_masks is None else patch_cover(fit_masks, patch)
    best = int(np.argmax(fit.mean(0)))
    rows = np.arange(len(per_patch))
    return {"rollout": float(per_patch[rows, peaks].mean()), "raw": float(per_patch[rows, raw_peaks].mean()),
            "fixed": float(per_patch[:, best].mean()), "fixed_patch": best, "chance": float(per_patch.mean())}


def patch_cover(masks: np.ndarray, patch: int) -> np.ndarray:
    """(N, patches) bool, row-major over the grid: which patches of each (N, S, S) mask overlap the object."""
    n, s, _ = masks.shape
    g = s // patch
    return masks.reshape(n, g, patch, g, patch).any(axis=(2, 4)).reshape(n, g * g)


def patch_hits(peaks: np.ndarray, masks: np.ndarray, patch: int) -> np.ndarray:
    """(N,) bool: whether patch ``peaks[i]`` (row-major over the grid) overlaps ``masks[i]`` (N, S, S)."""
    return patch_cover(masks, patch)[np.arange(len(masks)), peaks]
