"""Transformer blocks (pre-LN or post-LN), the MLP, and the input embeddings."""

from __future__ import annotations

import math

import torch
from torch import nn

from attnviz.models.attention import Attention
from attnviz.models.config import ModelConfig

__all__ = ["Block", "MLP", "TokenEmbedding", "sinusoidal_table", "dropped"]


def dropped(drop: nn.Dropout, x: torch.Tensor) -> torch.Tensor:
    """``drop(x)`` while training; ``x`` itself otherwise, which is what an evaluating Dropout returns.

    Why not call the module: every keystroke runs the model (a translation, one decoder pass per output
    token), and the module calls of evaluation-mode dropouts cost about a tenth of such a run.
    """
    return drop(x) if drop.training and drop.p > 0 else x


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        hidden = int(cfg.d_model * cfg.mlp_ratio)
        self.fc1 = nn.Linear(cfg.d_model, hidden)
        self.act = nn.GELU() if cfg.activation == "gelu" else nn.ReLU()
        self.fc2 = nn.Linear(hidden, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropped(self.drop, self.fc2(self.act(self.fc1(x))))


class Block(nn.Module):
    """Self-attention (+ optional cross-attention) and an MLP, each wrapped in residual + LayerNorm.

    Pre-LN (ViT, GPT-2):   x = x + SA(LN(x));        x = x + MLP(LN(x))
    Post-LN (Vaswani):     x = LN(x + SA(x));        x = LN(x + MLP(x))
    """

    def __init__(self, cfg: ModelConfig, causal: bool = False, cross: bool = False):
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg, causal=causal)
        self.cross = Attention(cfg) if cross else None
        self.ln_cross = nn.LayerNorm(cfg.d_model) if cross else None
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)
        self.record: dict | None = None

    def _sublayer(self, x, ln, fn):
        if self.pre:
            return x + dropped(self.drop, fn(ln(x)))
        return ln(x + dropped(self.drop, fn(x)))

    def forward(self, x, key_pad=None, memory=None, memory_pad=None):
        x = self._sublayer(x, self.ln1, lambda h: self.attn(h, key_pad=key_pad))
        if self.record is not None:
            self.record["h"] = x.detach()  # after the attention sub-layer (residual + norm)
        if self.cross is not None:
            x = self._sublayer(x, self.ln_cross, lambda h: self.cross(h, kv=memory, key_pad=memory_pad))
        y = self._sublayer(x, self.ln2, self.mlp)
        if self.record is not None:
            self.record["resid"] = y.detach()  # the residual stream after this block
        return y


def sinusoidal_table(n: int, d: int) -> torch.Tensor:
    """The fixed sin/cos positional encoding of Vaswani et al.: (n, d)."""
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    table = torch.zeros(n, d)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return table


class PositionalEncoding(nn.Module):
    """Learned table, fixed sinusoids or nothing; ``enabled`` lets the what-if lab switch it off."""

    def __init__(self, kind: str, n: int, d: int):
        super().__init__()
        self.kind = kind
        self.enabled = True
        if kind == "learned":
            self.table = nn.Parameter(torch.randn(n, d) * 0.02)
        elif kind == "sinusoidal":
            self.register_buffer("table", sinusoidal_table(n, d), persistent=False)
        else:
            self.table = None

    def forward(self, t: int, offset: int = 0) -> torch.Tensor | None:
        if self.table is None or not self.enabled:
            return None
        return self.table[offset : offset + t]  # (t, d)


class TokenEmbedding(nn.Module):
    """Token embedding + positional encoding; records both parts and their sum when asked."""

    def __init__(self, cfg: ModelConfig, vocab: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, cfg.d_model)
        self.pos = PositionalEncoding(cfg.pos, cfg.max_len, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.max_len = cfg.max_len
        self.record: dict | None = None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        tok = self.tok(ids)  # (B, T, D)
        pos = self.pos(ids.shape[1])
        x = tok if pos is None else tok + pos
        if self.record is not None:
            self.record["token"] = tok.detach()
            self.record["pos"] = (torch.zeros_like(tok) if pos is None else pos.expand_as(tok)).detach()
            self.record["sum"] = x.detach()
        return dropped(self.drop, x)
