"""Multi-head attention with two paths: fused for training, explicit for looking.

The fused path calls ``F.scaled_dot_product_attention``. The explicit path spells out
``softmax(q kᵀ · scale + mask) v`` so every intermediate can be recorded; ``capture()`` switches a
model to it and back. Both paths compute the same function (tested with allclose).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnviz.models.config import ModelConfig

__all__ = ["Attention", "build_additive_mask"]


def build_additive_mask(
    t_q: int, t_k: int, causal: bool, key_pad: torch.Tensor | None, device, dtype=torch.float32
) -> torch.Tensor | None:
    """Additive mask (0 where allowed, -inf where masked), shape (B or 1, 1, t_q, t_k), or None.

    ``key_pad`` is (B, t_k) bool, True at padding positions.
    """
    if not causal and key_pad is None:
        return None
    mask = torch.zeros(1, 1, t_q, t_k, device=device, dtype=dtype)
    if causal:
        # query i may see keys j <= i (+ offset when keys are longer, e.g. cached prefixes)
        upper = torch.ones(t_q, t_k, device=device, dtype=torch.bool).triu(1 + t_k - t_q)
        mask = mask.masked_fill(upper, float("-inf"))
    if key_pad is not None:
        mask = mask.masked_fill(key_pad[:, None, None, :], float("-inf"))  # (B, 1, t_q, t_k)
    return mask


class Attention(nn.Module):
    """Self- or cross-attention with H query heads and H_kv key/value heads (GQA when H_kv < H).

    Attributes the inspection code sets:
      ``fused``      – use F.scaled_dot_product_attention (training) or the explicit path (capture)
      ``record``     – a dict the explicit path fills with every intermediate, or None
      ``keep_grad``  – retain the gradient of the attention probabilities (gradient rollout)
      ``scale``      – the factor applied to q·kᵀ (1/√d_k by default; the what-if lab changes it)
      ``causal``     – apply the causal mask (the what-if lab can switch it off)
      ``head_gate``  – optional (H,) multipliers on each head's z (head ablation)
    """

    def __init__(self, cfg: ModelConfig, causal: bool = False):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.head_dim
        d = cfg.d_model
        self.q_proj = nn.Linear(d, self.n_heads * self.d_head, bias=cfg.attn_bias)
        self.k_proj = nn.Linear(d, self.n_kv_heads * self.d_head, bias=cfg.attn_bias)
        self.v_proj = nn.Linear(d, self.n_kv_heads * self.d_head, bias=cfg.attn_bias)
        self.o_proj = nn.Linear(self.n_heads * self.d_head, d, bias=cfg.attn_bias)
        self.dropout = cfg.dropout
        self.scale = cfg.scale
        self.causal = causal
        self.fused = True
        self.record: dict | None = None
        self.keep_grad = False
        self.head_gate: torch.Tensor | None = None

    @property
    def group(self) -> int:
        """How many query heads share one key/value head."""
        return self.n_heads // self.n_kv_heads

    def forward(
        self, x: torch.Tensor, kv: torch.Tensor | None = None, key_pad: torch.Tensor | None = None
    ) -> torch.Tensor:
        """x: (B, T_q, D) queries' input; kv: (B, T_k, D) keys'/values' input (None: self-attention)."""
        src = x if kv is None else kv
        B, Tq, _ = x.shape
        Tk = src.shape[1]
        q = self.q_proj(x).view(B, Tq, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, Tq, dh)
        k = self.k_proj(src).view(B, Tk, self.n_kv_heads, self.d_head).transpose(1, 2)  # (B, Hkv, Tk, dh)
        v = self.v_proj(src).view(B, Tk, self.n_kv_heads, self.d_head).transpose(1, 2)  # (B, Hkv, Tk, dh)
        causal = self.causal and kv is None
        if self.fused and self.record is None:
            z = self._fused(q, k, v, causal, key_pad)
        else:
            z = self._explicit(x, q, k, v, causal, key_pad, src=None if kv is None else kv)
        if self.head_gate is not None:
            z = z * self.head_gate.to(z.dtype).view(1, -1, 1, 1)
        merged = z.transpose(1, 2).reshape(B, Tq, self.n_heads * self.d_head)  # (B, Tq, H*dh)
        out = self.o_proj(merged)  # (B, Tq, D)
        if self.record is not None:
            self.record["out"] = out.detach()
        return out

    def _fused(self, q, k, v, causal, key_pad):
        drop = self.dropout if self.training else 0.0
        if key_pad is None:
            mask, is_causal = None, causal
        else:
            # boolean "may attend" mask, (B, 1, Tq, Tk); causal part folded in
            allowed = ~key_pad[:, None, None, :]
            if causal:
                Tq, Tk = q.shape[2], k.shape[2]
                allowed = allowed & torch.ones(Tq, Tk, dtype=torch.bool, device=q.device).tril(Tk - Tq)
            mask, is_causal = allowed, False
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=drop, is_causal=is_causal, scale=self.scale,
            enable_gqa=self.group > 1,
        )  # (B, H, Tq, dh)

    def _explicit(self, x, q, k, v, causal, key_pad, src=None):
        Tq, Tk = q.shape[2], k.shape[2]
        k_rep = k.repeat_interleave(self.group, dim=1)  # (B, H, Tk, dh): head h reads kv head h // group
        v_rep = v.repeat_interleave(self.group, dim=1)
        logits = (q @ k_rep.transpose(-2, -1)) * self.scale  # (B, H, Tq, Tk), before the mask
        mask = build_additive_mask(Tq, Tk, causal, key_pad, q.device, logits.dtype)
        masked = logits if mask is None else logits + mask
        probs = torch.softmax(masked, dim=-1)  # (B, H, Tq, Tk)
        if self.keep_grad and probs.requires_grad:
            probs.retain_grad()
        dropped = F.dropout(probs, self.dropout) if self.training and self.dropout else probs
        z = dropped @ v_rep  # (B, H, Tq, dh)
        if self.record is not None:
            rec = self.record
            rec["x"] = x.detach()
            if src is not None:  # cross-attention: the encoder output that k and v are made from
                rec["x_kv"] = src.detach()
            rec["q"], rec["k"], rec["v"] = q.detach(), k.detach(), v.detach()
            rec["logits"] = logits.detach()
            rec["mask"] = (mask if mask is not None else torch.zeros(1, 1, Tq, Tk, device=q.device)).detach()
            rec["probs"] = probs if self.keep_grad else probs.detach()
            rec["z"] = z.detach()
        return z
