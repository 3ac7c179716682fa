"""Tiny seeded native models and inputs for the capture, analysis and command-line tests (built in milliseconds)."""

from __future__ import annotations

import torch

from attnviz.models.attention import Attention
from attnviz.models.config import ModelConfig
from attnviz.models.registry import build_model
from attnviz.vision.preprocess import patch_labels

BASE = dict(n_layers=2, n_heads=4, d_model=16, max_len=16, mlp_ratio=2.0)


def tiny_config(kind: str = "encoder", **overrides) -> ModelConfig:
    base = dict(BASE, kind=kind)
    if kind == "vit":
        base.update(image_size=8, patch_size=2, in_chans=3, n_classes=3)
    else:
        base.update(vocab_size=20)
    if kind == "decoder":
        base["head"] = "lm"
    if kind == "encoder-decoder":
        base.update(head="lm", tgt_vocab_size=15, n_dec_layers=2)
    base.update(overrides)
    return ModelConfig(**base)


def build_tiny(kind: str = "encoder", seed: int = 0, std: float = 0.3, **overrides):
    """A seeded model whose weights are re-drawn with a larger spread than the training init (0.02),
    so attention is far from uniform and the tests can tell heads, positions and mistakes apart."""
    torch.manual_seed(seed)
    model = build_model(tiny_config(kind, **overrides))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 or name.endswith("bias") and "ln" not in name and "norm" not in name:
                p.normal_(0.0, std)
    return model.eval()


def make_inputs(model, T: int = 6, seed: int = 1, pad: int = 0):
    """Inputs of a batch of one and their position labels; ``pad`` marks the last keys as padding."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(seed)
    if cfg.kind == "vit":
        images = torch.randn(1, cfg.in_chans, cfg.image_size, cfg.image_size, generator=g)
        return {"images": images}, patch_labels(cfg.grid)
    ids = torch.randint(7, cfg.vocab_size, (1, T), generator=g)
    key_pad = None
    if pad:
        key_pad = torch.zeros(1, T, dtype=torch.bool)
        key_pad[0, T - pad :] = True
    if cfg.kind == "encoder-decoder":
        tgt = torch.randint(7, cfg.tgt_vocab, (1, T - 1), generator=g)
        inputs = {"src": ids, "tgt": tgt}
        if key_pad is not None:
            inputs["src_pad"] = key_pad
        return inputs, [f"t{int(i)}" for i in tgt[0]]
    inputs = {"ids": ids}
    if key_pad is not None:
        inputs["key_pad"] = key_pad
    return inputs, [f"w{int(i)}" for i in ids[0]]


def attention_modules(model) -> list[Attention]:
    return [m for m in model.modules() if isinstance(m, Attention)]
