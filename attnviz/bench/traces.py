"""Traces for demos, tests and benchmarks of the views, made here without files or downloads.

``sample_trace`` runs a tiny seeded model of any kind through :func:`attnviz.capture.capture` (the
real path); ``synthetic_trace`` fills a Trace with random attention of any size without a model, for
benchmarks at T=4096 where a forward pass would only measure the model.
"""

from __future__ import annotations

import numpy as np

from attnviz.capture import Trace, capture
from attnviz.capture.description import TraceDescription
from attnviz.capture.finish import finish_trace

__all__ = ["sample_trace", "synthetic_trace", "SAMPLE_WORDS"]

SAMPLE_WORDS = ("the", "animal", "did", "n't", "cross", "the", "street", "because", "it", "was", "too",
                "tired", ".")


def sample_trace(kind: str = "encoder", T: int = 8, seed: int = 0, grad: bool = False, n_layers: int = 2,
                 n_heads: int = 4, d_model: int = 16, std: float = 0.3, **overrides) -> Trace:
    """Trace of a tiny random model (weights drawn with spread ``std`` so heads differ clearly).

    kind : "encoder", "decoder", "encoder-decoder" or "vit" (8×8 image, 2×2 patches: a 4×4 grid).
    """
    import torch

    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model
    from attnviz.vision.preprocess import patch_labels

    cfg = dict(kind=kind, n_layers=n_layers, n_heads=n_heads, d_model=d_model, max_len=max(T, 16),
               mlp_ratio=2.0)
    if kind == "vit":
        cfg.update(image_size=8, patch_size=2, in_chans=3, n_classes=3)
    else:
        cfg.update(vocab_size=max(T, 20) + 7)
    if kind in ("decoder", "encoder-decoder"):
        cfg["head"] = "lm"
    cfg.update(overrides)
    torch.manual_seed(seed)
    model = build_model(ModelConfig(**cfg))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, std)
    model.eval()
    g = torch.Generator().manual_seed(seed + 1)
    if kind == "vit":
        img = torch.rand(1, 3, 8, 8, generator=g)
        trace = capture(model, {"images": (img - 0.5) / 0.5}, patch_labels(model.cfg.grid), grad=grad,
                        precision="float32")
        trace.arrays["image"] = img[0].permute(1, 2, 0).numpy().astype(np.float32)  # (S, S, C)
        return trace
    ids = torch.randint(7, cfg["vocab_size"], (1, T), generator=g)
    words = [SAMPLE_WORDS[i % len(SAMPLE_WORDS)] for i in range(T)]
    if kind == "encoder-decoder":
        tgt = torch.randint(7, cfg["vocab_size"], (1, T - 1), generator=g)
        out = [f"t{i}" for i in range(T - 1)]
        trace = capture(model, {"src": ids, "tgt": tgt}, out, grad=grad, precision="float32")
        trace.arrays["src_tokens"] = np.array(words, dtype=str)
        return trace
    if kind == "encoder":
        words[0] = "[CLS]"
    return capture(model, {"ids": ids}, words, grad=grad, precision="float32")


def synthetic_trace(T: int, n_layers: int = 2, n_heads: int = 4, causal: bool = True, seed: int = 0,
                    dtype=None) -> Trace:
    """A Trace holding only random attention probabilities (softmax of random logits) and masks.

    Stored as float16 above 512 tokens, as :func:`attnviz.capture.capture` does.
    """
    rng = np.random.default_rng(seed)
    dtype = dtype or (np.float16 if T > 512 else np.float32)
    mask = np.zeros((T, T), np.float32)
    if causal:
        mask[np.triu_indices(T, 1)] = -np.inf
    arrays = {}
    for layer in range(n_layers):
        probs = np.empty((n_heads, T, T), dtype)
        for h in range(n_heads):
            logits = rng.standard_normal((T, T), dtype=np.float32) * 3.0 + mask  # (T, T)
            logits -= logits.max(axis=1, keepdims=True)
            np.exp(logits, out=logits)
            logits /= logits.sum(axis=1, keepdims=True)
            probs[h] = logits
        arrays[f"L{layer}.probs"] = probs
        arrays[f"L{layer}.mask"] = mask
    description = TraceDescription(kind="decoder" if causal else "encoder", n_layers=n_layers, n_heads=n_heads,
                                   n_kv_heads=n_heads, scale=1.0, causal=causal)
    return finish_trace([f"tok{i}" for i in range(T)], arrays, description)
