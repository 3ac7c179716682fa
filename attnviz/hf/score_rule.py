"""What a fast-recorded attention call added to its scores, as a compact :class:`ScoreRule` (no T×T unless needed).

transformers' SDPA path hands the attention function no mask at all for a causal model without padding
(the kernel applies the causal rule), or a boolean "may attend" map (sliding windows, padding) or an additive
float map (a relative position bias). A boolean map that equals the causal rule (with the call's sliding window)
is stored as that rule; any other blocked pattern as packed bits (T²/8 bytes); a finite bias as a stored array
of (1|H, Tq, Tk) up to :data:`MAX_BIAS_T` positions (above, the capture says so in one line).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from attnviz.capture.on_demand import ScoreRule
from attnviz.errors import InputError

__all__ = ["rule_of", "blocked_description", "finite_bias", "tensor_key", "MAX_BIAS_T"]

MAX_BIAS_T = 4096  # a stored (heads, T, T) bias above this length would dominate the trace's memory
_ROWS = 1024  # mask rows compared at once


def _blocked_rows(mask: torch.Tensor, r0: int, r1: int) -> torch.Tensor:
    """(r, Tk) bool: cells blocked in rows r0..r1 of batch row 0 / head 0 of a boolean or additive mask."""
    m = mask.reshape(-1, *mask.shape[-2:])[0]
    m = m[r0:r1] if m.shape[0] != 1 else m
    if m.dtype == torch.bool:
        return ~m
    lo = torch.finfo(m.dtype).min / 2
    return (m <= lo) | torch.isneginf(m)


def _rule_blocked(causal: bool, window: int | None, r0: int, r1: int, tk: int) -> torch.Tensor:
    i = torch.arange(r0, r1)[:, None]
    j = torch.arange(tk)[None, :]
    gone = torch.zeros((r1 - r0, tk), dtype=torch.bool)
    if causal:
        gone |= j > i
    if window is not None:
        gone |= (i - j) >= window
    return gone


def blocked_description(mask: torch.Tensor, tq: int, tk: int, window: int | None) -> dict:
    """{causal, window} when the mask's blocked cells follow that rule, else {blocked_bits}; compared in row
    chunks (never a second T×T)."""
    candidates = [(True, window), (True, None), (False, None)] if window else [(True, None), (False, None)]
    for causal, win in candidates:
        if all(torch.equal(_blocked_rows(mask, r0, min(tq, r0 + _ROWS)).expand(min(tq, r0 + _ROWS) - r0, tk),
                           _rule_blocked(causal, win, r0, min(tq, r0 + _ROWS), tk))
               for r0 in range(0, tq, _ROWS)):
            return {"causal": causal, "window": win}
    bits = np.concatenate([np.packbits(_blocked_rows(mask, r0, min(tq, r0 + _ROWS))
                                       .expand(min(tq, r0 + _ROWS) - r0, tk).numpy(), axis=1)
                           for r0 in range(0, tq, _ROWS)])
    return {"blocked_bits": bits}  # (Tq, ⌈Tk/8⌉) uint8


def finite_bias(mask: torch.Tensor) -> torch.Tensor | None:
    """The finite additive part of a float mask (1|H, Tq, Tk), or None (boolean or all zero)."""
    if mask.dtype == torch.bool:
        return None
    m = mask.reshape(-1, *mask.shape[-3:])[0] if mask.dim() == 4 else mask.reshape(1, *mask.shape[-2:])
    lo = torch.finfo(mask.dtype).min / 2
    finite = torch.where((m <= lo) | torch.isneginf(m), 0.0, m.float())
    return finite if bool(finite.abs().max() > 0) else None


def tensor_key(t: torch.Tensor) -> tuple:
    """What identifies a tensor's contents while it is alive: its storage address, shape, strides and dtype.

    T5 hands every layer of a stack the same bias as a new view object of one storage (a new ``id`` each call);
    keyed by storage, the bias is described once per stack, not once per layer (a pass over (H, T, T) each)."""
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))


def rule_of(call, scale: float, seen: dict) -> ScoreRule:
    """The :class:`ScoreRule` of one fast-recorded call (``seen``: :func:`tensor_key` of the mask → description,
    shared by the layers handed the same mask)."""
    own = getattr(call, "rule", None)
    if isinstance(own, ScoreRule):  # a family computing attention itself: its recorder states the rule exactly
        return replace(own, scale=float(scale))
    tq, tk = int(call.lse.shape[-1]), int(call.key.shape[-2])
    if call.mask is None:
        blocked = {"causal": bool(call.is_causal), "window": None}
        bias = None
    else:
        key = tensor_key(call.mask)
        if key not in seen:
            b = finite_bias(call.mask)
            if b is not None and max(tq, tk) > MAX_BIAS_T:
                raise InputError(f"this model adds a learned bias to every attention score; attnviz keeps it as a "
                                 f"(heads, T, T) array, up to {MAX_BIAS_T:,} tokens (this input has {max(tq, tk):,})")
            seen[key] = (blocked_description(call.mask, tq, tk, call.sliding_window),
                         None if b is None else b.numpy().astype(np.float32))
        blocked, bias = seen[key]
    return ScoreRule(scale=float(scale), softcap=call.softcap, causal=bool(blocked.get("causal")),
                     window=blocked.get("window"), blocked_bits=blocked.get("blocked_bits"), bias=bias)
