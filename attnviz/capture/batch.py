"""Attention probabilities of a whole batch in one explicit forward pass (metrics over many inputs).

:func:`attnviz.capture.record.capture` records every intermediate of one input into a Trace; metrics
over thousands of inputs need only the probabilities, for all of them at once.
"""

from __future__ import annotations

import torch

from attnviz.capture.record import recording
from attnviz.models.registry import attention_layers

__all__ = ["batch_attention"]


@torch.no_grad()
def batch_attention(model, inputs: dict, as_numpy: bool = True):
    """One explicit forward pass of a batch → ``(logits, probs)``; probs by part, each a list over layers.

    The parts are "self" (decoder / only stack), "cross" (decoder cross-attention) and "enc" (encoder of
    an encoder–decoder); each entry is (B, H, T_q, T_k), float32 numpy (or the tensors themselves, on
    the model's device, with ``as_numpy=False``).
    """
    def keep(t: torch.Tensor):
        return t.float().cpu().numpy() if as_numpy else t

    layers = attention_layers(model)
    probs: dict[str, list] = {"self": [], "cross": [], "enc": []}
    with recording(model):
        logits = model(**inputs)
        for role, blocks in layers.items():
            for block in blocks:
                probs["enc" if role == "enc" else "self"].append(keep(block.attn.record["probs"]))
                if getattr(block, "cross", None) is not None:
                    probs["cross"].append(keep(block.cross.record["probs"]))
    return logits, probs
