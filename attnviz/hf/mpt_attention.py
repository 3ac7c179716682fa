"""MPT's attention, read by hooks on its public submodules (Qt-free): short inputs in full, long ones on demand.

``MptAttention`` computes attention in its own code (not through transformers' attention interface):
``Wqkv`` (one fused projection, optionally clamped to ±``clip_qkv``) → q | k | v in three column blocks, each
(B, T, H·dh) → (B, H, T, dh); scores = q·kᵀ·``softmax_scale`` + ``position_bias`` (ALiBi: the model builds it
once for ``max_seq_len`` positions, (H, 1, L) = slope_h · (j − (L − 1)), and every layer adds its last Tk
columns: slope_h · j up to a constant per row, which softmax ignores); blocked cells (a boolean "blocked" mask)
set to the dtype's minimum; softmax; z = p·v is the output projection's input.

Two readings share :func:`_parts`:

- :func:`mpt_full` (output_attentions runs, short inputs): the additive map the model adds, bias and blocked cells
  as one (1, H, Tq, Tk) mask, checked against the model's probabilities like every hooked family;
- :func:`mpt_fast` (the model's forward without maps, long inputs): no (H, T, T) array; a :class:`ScoreRule`
  with the blocked cells as a rule (causal) or bits, and ALiBi as one slope per head read from the model's own
  ``position_bias`` (checked: slope · j gives the model's bias on every key up to a constant, within 1e-5 of its
  largest entry).

Exactness: attnviz recomputes scores in float64 from the float32 slopes; the model adds its float32 bias to its
float32 scores, so its own probabilities carry that rounding (≈ ulp(slope·T) in a score: 1e-6 at 64 tokens,
1e-4 at a few thousand with the steepest slope of 1/2).
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.capture.on_demand import ScoreRule
from attnviz.hf.score_rule import blocked_description

__all__ = ["mpt_full", "mpt_fast", "CHILDREN"]

CHILDREN = ("Wqkv", "out_proj")  # the submodules whose (input, output) the readings use


def _alibi(bound: dict, tk: int) -> torch.Tensor | None:
    """(H, Tk) float32: the ``position_bias`` columns the module adds to a layer of Tk keys (as it slices it)."""
    pos = bound.get("position_bias")
    if not isinstance(pos, torch.Tensor):
        return None
    if pos.dim() != 3 or pos.shape[-1] < tk:
        raise ValueError("MPT's position bias has a shape attnviz does not know")
    return pos[:, 0, pos.shape[-1] - tk:]  # (H, Tk): the same for every query row


def _clamped(module, fused: torch.Tensor) -> torch.Tensor:
    """The fused projection as the module uses it: clamped to ±clip_qkv when set (the hook sees it unclamped)."""
    return fused.clamp(min=-module.clip_qkv, max=module.clip_qkv) if module.clip_qkv else fused


def _parts(module, bound: dict, proj: dict) -> dict:
    """q, k, v (1, H, T, dh), z (1, T, H, dh), the block input, the scale and the fused columns (no mask)."""
    fused_in, fused = proj["Wqkv"]
    fused = _clamped(module, fused)
    H, dh = int(module.n_heads), int(module.head_dim)
    B, T = fused.shape[:2]
    q, k, v = (t.reshape(B, T, H, dh).transpose(1, 2) for t in fused.chunk(3, dim=2))  # (B, H, T, dh) each
    width = H * dh
    z_in = proj["out_proj"][0]
    return dict(query=q, key=k, value=v, scaling=float(module.softmax_scale), rope=None, x=fused_in,
                z=z_in.reshape(z_in.shape[0], z_in.shape[1], H, dh),
                columns={p: ("Wqkv", torch.arange(i * width, (i + 1) * width)) for i, p in enumerate("qkv")})


def mpt_full(module, bound: dict, proj: dict, out) -> dict:
    """The full reading (output_attentions): the module's additions as one additive mask (1, H, Tq, Tk)."""
    parts = _parts(module, bound, proj)
    H, tq, tk = parts["query"].shape[1], parts["query"].shape[2], parts["key"].shape[2]
    alibi = _alibi(bound, tk)
    add = torch.zeros((1, H, tq, tk)) if alibi is None else alibi.float()[None, :, None, :].expand(1, H, tq, tk)
    blocked = bound.get("attention_mask")
    if isinstance(blocked, torch.Tensor):  # True = blocked, filled with the minimum as the module does
        add = add.masked_fill(blocked.bool(), torch.finfo(torch.float32).min)
    return {**parts, "mask": add.contiguous()}


def _slopes(alibi: torch.Tensor) -> np.ndarray:
    """Per-head slopes of a bias (H, Tk) = slope_h · (j − (Tk − 1)): the last column is 0, the one before −slope."""
    if alibi.shape[-1] < 2:
        return np.zeros(alibi.shape[0], np.float32)
    return (alibi[:, -1] - alibi[:, -2]).float().cpu().numpy()


def mpt_fast(module, bound: dict, proj: dict, out) -> dict:
    """The on-demand reading: the parts and a :class:`ScoreRule` (``rule``); never an (H, T, T) array."""
    parts = _parts(module, bound, proj)
    tq, tk = parts["query"].shape[2], parts["key"].shape[2]
    rule = dict(scale=parts["scaling"], causal=False)
    blocked = bound.get("attention_mask")
    if isinstance(blocked, torch.Tensor):  # MPT's mask says "blocked"; the description reads "may attend"
        desc = blocked_description(~blocked.bool(), tq, tk, None)
        rule.update(causal=bool(desc.get("causal")), window=desc.get("window"), blocked_bits=desc.get("blocked_bits"))
    alibi = _alibi(bound, tk)
    if alibi is not None:
        slopes = _slopes(alibi)
        got = slopes.astype(np.float64)[:, None] * np.arange(tk, dtype=np.float64)[None]  # (H, Tk)
        want = alibi.double().cpu().numpy()
        got, want = got - got[:, -1:], want - want[:, -1:]  # a constant per row: softmax ignores it
        if np.abs(got - want).max() > 1e-5 * max(1.0, float(np.abs(want).max())):
            raise ValueError("MPT's position bias is not slope · key position")
        rule["alibi"] = slopes
    return {**parts, "rule": ScoreRule(**rule)}
