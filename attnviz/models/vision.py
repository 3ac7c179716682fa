"""Vision transformer: P×P×C patches, a CLS token, positional embeddings, a classification head."""

from __future__ import annotations

import torch
from torch import nn

from attnviz.models.blocks import PositionalEncoding
from attnviz.models.config import ModelConfig
from attnviz.models.text import Stack, _init_weights

__all__ = ["VisionTransformer", "PatchEmbedding"]


class PatchEmbedding(nn.Module):
    """Cut the image into P×P patches and project each flattened patch to D (a strided conv)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.proj = nn.Conv2d(cfg.in_chans, cfg.d_model, kernel_size=cfg.patch_size, stride=cfg.patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, cfg.d_model))
        self.pos = PositionalEncoding(cfg.pos, cfg.n_patches + 1, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.record: dict | None = None

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        patches = self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D), row-major over the grid
        tok = torch.cat([self.cls.expand(images.shape[0], -1, -1), patches], dim=1)  # (B, 1+N, D)
        pos = self.pos(tok.shape[1])
        x = tok if pos is None else tok + pos
        if self.record is not None:
            self.record["token"] = tok.detach()
            self.record["pos"] = (torch.zeros_like(tok) if pos is None else pos.expand_as(tok)).detach()
            self.record["sum"] = x.detach()
        return self.drop(x)


class VisionTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = PatchEmbedding(cfg)
        self.stack = Stack(cfg, cfg.n_layers)
        self.head = nn.Linear(cfg.d_model, cfg.n_classes)
        _init_weights(self)
        nn.init.normal_(self.embed.cls, std=0.02)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """images: (B, C, H, W), already normalised → logits (B, n_classes) from the CLS token."""
        return self.head(self.stack(self.embed(images))[:, 0])
