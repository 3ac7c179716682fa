"""Learning-rate schedule (linear warm-up, cosine decay) and the AdamW optimizer setup."""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["lr_at", "make_optimizer", "MIN_LR_RATIO"]

# Cosine decay ends at this fraction of the peak rate rather than 0, so the last steps still learn.
MIN_LR_RATIO = 0.1


def lr_at(step: int, total: int, peak: float, warmup: int) -> float:
    """Learning rate for optimizer step ``step`` (0-based) of ``total``.

    Rises linearly over ``warmup`` steps to ``peak``, then follows a half cosine down to
    ``MIN_LR_RATIO * peak`` at the last step.

    Parameters
    ----------
    step : int
        Index of the step about to be taken, 0 ≤ step < total.
    total : int
        Number of optimizer steps in the run.
    peak : float
        Learning rate reached at the end of the warm-up.
    warmup : int
        Warm-up length in steps (clipped to ``total``).
    """
    warmup = max(0, min(int(warmup), total))
    if step < warmup:
        return peak * (step + 1) / warmup
    span = max(1, total - warmup - 1)
    progress = min(1.0, (step - warmup) / span)
    floor = peak * MIN_LR_RATIO
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model: nn.Module, lr: float, weight_decay: float,
                   decay_by_name: dict[str, float] | None = None) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (biases, norms and 1-D tables are not decayed).

    Parameters
    ----------
    model : nn.Module
        The model whose parameters are optimised.
    lr : float
        Initial learning rate (the loop overwrites it every step from :func:`lr_at`).
    weight_decay : float
        Decoupled weight decay applied to parameters with two or more dimensions.
    decay_by_name : dict, optional
        Parameter name (as in ``model.named_parameters()``) → its own weight decay, overriding the rule
        above (a task's ``decay_by_name``, e.g. a stronger decay for a ViT's patch filters). A name the
        model does not have is an error, so a renamed parameter cannot silently lose its setting.
    """
    own = dict(decay_by_name or {})
    named = dict(model.named_parameters())
    missing = sorted(set(own) - set(named))
    if missing:
        raise ValueError(f"decay_by_name names parameters the model does not have: {missing}")
    decay, no_decay = [], []
    for name, p in named.items():
        if p.requires_grad and name not in own:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    groups += [{"params": [named[name]], "weight_decay": float(wd)} for name, wd in own.items()
               if named[name].requires_grad]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98), eps=1e-8)
