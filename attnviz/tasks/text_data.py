"""Helpers the generated-text tasks share: stable train/held-out splits, padding, classifying at a word."""

from __future__ import annotations

import hashlib

import numpy as np
import torch

__all__ = ["held_out", "pad_ids", "find_token", "batched_probs"]


def held_out(key: str, fraction: float, salt: str = "") -> bool:
    """True for about ``fraction`` of all keys, the same on every machine and Python version.

    A hash (not ``hash()``, which is salted per process) decides, so the held-out set is fixed by the
    data itself: a combination that is held out is never generated for training.
    """
    digest = hashlib.blake2b(f"{salt}|{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < fraction


def pad_ids(seqs: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists into ``ids`` (B, T) and ``key_pad`` (B, T) bool, True at padding."""
    T = max(len(s) for s in seqs)
    ids = np.full((len(seqs), T), pad_id, dtype=np.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
    ids_t = torch.from_numpy(ids)
    return ids_t, ids_t == pad_id


def find_token(tokens: list[str], word: str, start: int = 0) -> int | None:
    """Index of the first ``word`` in ``tokens`` at or after ``start`` (case-insensitive), or None."""
    word = word.lower()
    for i in range(start, len(tokens)):
        if tokens[i].lower() == word:
            return i
    return None


def batched_probs(model, inputs: dict) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """One explicit-path forward pass of a whole batch; returns logits and each main layer's probs (B, H, T, T)."""
    from attnviz.capture.batch import batch_attention

    logits, probs = batch_attention(model, inputs, as_numpy=False)
    return logits, probs["self"]
