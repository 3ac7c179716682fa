"""Attention output and each row's log-sum-exp on the fastest kernel torch has (the one compatibility module).

PyTorch's CPU flash-attention kernel, ``torch.ops.aten._scaled_dot_product_flash_attention_for_cpu``, is what
``scaled_dot_product_attention`` runs on CPU; it also returns the log-sum-exp of every row, which is all a
trace needs besides q and k to recompute any block of probabilities exactly (:mod:`attnviz.capture.on_demand`).
It is a private (underscore) operator, named only in :mod:`attnviz.torch_private`. Whatever it cannot take (soft-cap, learned
sinks, dropout, another device, a torch without it) goes through :func:`chunked_attention`, the same
mathematics in query chunks with ``torch.logsumexp`` (tested against the kernel), never holding T×T.
"""

from __future__ import annotations

import torch

from attnviz.torch_private import cpu_flash_attention

__all__ = ["attention_with_lse", "chunked_attention", "kernel_available", "CHUNK_CELLS"]

# the fallback's score chunk: at most this many (batch · head · row · key) cells at once (float32: 4 bytes each)
CHUNK_CELLS = 1 << 24


_KERNEL: list = []  # [the kernel or None] once looked up: torch.ops' attribute lookup cost ~0.1 ms every call


def _kernel():
    if not _KERNEL:
        _KERNEL.append(cpu_flash_attention())
    return _KERNEL[0]


_GQA: list = []  # [bool] once probed: whether the kernel itself maps query head h to key/value head h // groups


def _kernel_takes_gqa(kernel) -> bool:
    """Whether the kernel takes fewer key/value heads than query heads and reads them as ``repeat_interleave``
    would (torch's own SDPA does so with ``enable_gqa``; repeating k and v for it copied both every layer:
    ~5 % of a 512-token capture of a 9/3-head model). Probed once on a tiny input against the repeated call, so
    a torch whose kernel refuses or reads another mapping keeps the copy."""
    if not _GQA:
        g = torch.Generator().manual_seed(0)
        q, k, v = torch.randn(1, 4, 3, 8, generator=g), torch.randn(1, 2, 3, 8, generator=g), \
            torch.randn(1, 2, 3, 8, generator=g)
        try:
            got = kernel(q, k, v, 0.0, True, scale=0.3)
            want = kernel(q, _repeat_kv(k, 2), _repeat_kv(v, 2), 0.0, True, scale=0.3)
            ok = got[0].shape == want[0].shape and bool(torch.equal(got[0], want[0])) \
                and bool(torch.equal(got[1], want[1]))
        except (RuntimeError, NotImplementedError, IndexError):
            ok = False
        _GQA.append(ok)
    return _GQA[0]


def kernel_available() -> bool:
    """Whether this torch has the CPU kernel that returns the log-sum-exp."""
    return _kernel() is not None


def _repeat_kv(t: torch.Tensor, groups: int) -> torch.Tensor:
    if groups == 1:
        return t
    b, h, n, d = t.shape  # (B, H_kv, T, dh) → (B, H_kv·groups, T, dh): query head h reads kv head h // groups
    return t[:, :, None].expand(b, h, groups, n, d).reshape(b, h * groups, n, d)


def _additive(mask: torch.Tensor | None, dtype) -> torch.Tensor | None:
    """A boolean "may attend" mask as 0 / −inf; a float additive mask as it is."""
    if mask is None or mask.dtype != torch.bool:
        return mask
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))


def chunked_attention(q, k, v, scale: float, is_causal: bool = False, mask=None, softcap: float | None = None,
                      sinks: torch.Tensor | None = None, chunk_cells: int = CHUNK_CELLS):
    """(out (B, H, Tq, dh), lse (B, H, Tq) float32) in query chunks: scores never exceed ``chunk_cells``.

    q (B, H, Tq, dh); k, v (B, H_kv, Tk, dh); ``mask`` additive float or boolean (True: may attend),
    broadcastable to (B, H, Tq, Tk); ``sinks`` (H,) learned logits that join every row's normaliser.
    Computed in float32 (the model's dtype is given back for ``out``)."""
    B, H, Tq, _ = q.shape
    Tk = k.shape[-2]
    groups = H // k.shape[1]
    kf, vf = _repeat_kv(k, groups).float(), _repeat_kv(v, groups).float()
    out = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, Tq), dtype=torch.float32, device=q.device)
    step = max(1, chunk_cells // max(1, B * H * Tk))
    cols = torch.arange(Tk, device=q.device)
    for r0 in range(0, Tq, step):
        r1 = min(Tq, r0 + step)
        s = torch.matmul(q[:, :, r0:r1].float(), kf.transpose(-1, -2)) * scale  # (B, H, r, Tk)
        if softcap:
            s = torch.tanh(s / softcap) * softcap
        if mask is not None:
            m = mask[..., r0:r1, :] if mask.shape[-2] != 1 else mask
            s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m.float()
        if is_causal:
            rows = torch.arange(r0, r1, device=q.device)  # top-left aligned, as torch's is_causal
            s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
        norm = s if sinks is None else torch.cat([s, sinks.float().reshape(1, H, 1, 1).expand(B, H, r1 - r0, 1)], -1)
        row_lse = torch.logsumexp(norm, dim=-1)  # (B, H, r)
        p = torch.exp(s - row_lse[..., None]).nan_to_num_(0.0)  # a row with nothing to attend stays 0
        out[:, :, r0:r1] = torch.matmul(p, vf).to(q.dtype)
        lse[:, :, r0:r1] = row_lse
    return out, lse


def attention_with_lse(q, k, v, scale: float, is_causal: bool = False, mask=None, softcap: float | None = None,
                       sinks: torch.Tensor | None = None, dropout: float = 0.0):
    """(out (B, H, Tq, dh), lse (B, H, Tq) float32): the kernel when it can take the call, else the fallback.

    Same arguments as :func:`chunked_attention`; dropout (training only) is refused by both."""
    if dropout:
        raise ValueError("attention with dropout has no fixed probabilities to record")
    kernel = _kernel()
    if kernel is None or softcap or sinks is not None or q.device.type != "cpu" \
            or q.dtype not in (torch.float32, torch.float16, torch.bfloat16) or q.shape[-1] != v.shape[-1]:
        return chunked_attention(q, k, v, scale, is_causal, mask, softcap, sinks)
    groups = q.shape[1] // k.shape[1]
    if groups != 1 and not _kernel_takes_gqa(kernel):
        k, v = _repeat_kv(k, groups), _repeat_kv(v, groups)  # (B, H_kv, T, dh) → (B, H, T, dh)
    m = _additive(mask, q.dtype)
    if m is not None and m.dtype != q.dtype:
        m = m.to(q.dtype)
    if is_causal and m is not None:  # the kernel takes a mask or the causal flag: fold the flag into the mask
        Tq, Tk = q.shape[-2], k.shape[-2]
        later = torch.arange(Tk, device=q.device)[None, :] > torch.arange(Tq, device=q.device)[:, None]
        m = m.masked_fill(later, float("-inf"))
    try:
        out, lse = kernel(q, k, v, 0.0, bool(is_causal and m is None), attn_mask=m, scale=float(scale))
    except (RuntimeError, NotImplementedError):  # a shape or dtype this torch's kernel refuses
        return chunked_attention(q, k, v, scale, is_causal, mask, softcap, sinks)
    return out, lse.float()
