"""The pointing game: does a ViT's attention rollout peak on the object it classifies?

For each image the CLS row of the attention rollout (:func:`attnviz.analysis.rollout.compute_rollout`,
default settings) is taken over the patches; its maximum is a "hit" when that patch overlaps the
object mask (Zhang et al., "Top-down neural attention by excitation backprop", 2016, counted per patch).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["classify_and_point", "patch_hits", "pointing_baselines"]


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


def pointing_baselines(peaks: np.ndarray, raw_peaks: np.ndarray, masks: np.ndarray, patch: int) -> dict:
    """The pointing game of rollout next to what it must beat, on all scenes and on off-centre ones.

    ``fixed``: the best model-free pointer, one patch for every scene (the best of all patches, so
    an upper bound of any "centre prior"); ``raw``: the last layer's CLS attention. ``off_*``: the same
    on the ``off_n`` scenes whose object misses that best fixed patch (where a centre prior scores 0 by
    construction; the best fixed patch re-chosen on those scenes is reported as their baseline).
    """
    n, s, _ = masks.shape
    g = s // patch
    per_patch = masks.reshape(n, g, patch, g, patch).any(axis=(2, 4)).reshape(n, g * g)  # (N, patches)
    rows = np.arange(n)
    by_patch = per_patch.mean(0)
    best = int(np.argmax(by_patch))
    # off-centre: the object misses the best fixed patch. (The generator's shapes, 14-24 px wide in 32, all
    # cover the central 2×2 patches, so "misses the centre" is no stricter in this data.)
    off = ~per_patch[:, best]
    out = {"rollout": float(per_patch[rows, peaks].mean()), "raw": float(per_patch[rows, raw_peaks].mean()),
           "fixed": float(by_patch[best]), "fixed_patch": divmod(best, g), "chance": float(per_patch.mean()),
           "off_n": int(off.sum())}
    if off.any():
        out.update(off_rollout=float(per_patch[off][np.arange(off.sum()), peaks[off]].mean()),
                   off_raw=float(per_patch[off][np.arange(off.sum()), raw_peaks[off]].mean()),
                   off_fixed=float(per_patch[off].mean(0).max()))
    return out


def patch_hits(peaks: np.ndarray, masks: np.ndarray, patch: int) -> np.ndarray:
    """(N,) bool: whether patch ``peaks[i]`` (row-major over the grid) overlaps ``masks[i]`` (N, S, S)."""
    n, s, _ = masks.shape
    g = s // patch
    per_patch = masks.reshape(n, g, patch, g, patch).any(axis=(2, 4)).reshape(n, g * g)  # (N, patches)
    return per_patch[np.arange(n), peaks]
