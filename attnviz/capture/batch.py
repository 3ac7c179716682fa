"""Attention of a whole batch in one explicit forward pass (metrics and scores over many inputs).

:func:`attnviz.capture.record.capture` records every intermediate of one input into a Trace; metrics
over thousands of inputs need a few recorded tensors (probabilities, queries, keys, the gradient of
the probabilities) for all of them at once. This is the one place that reads the attention modules'
records for a batch.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from attnviz.capture.record import recording
from attnviz.models.registry import attention_layers

__all__ = ["attention_modules", "record_batch", "batch_attention"]


def attention_modules(model) -> dict[str, list]:
    """The attention modules by part: "self" (decoder / only stack), "cross" and "enc" when present."""
    blocks = attention_layers(model)
    out = {"self": [b.attn for b in blocks["main"]]}
    if "enc" in blocks:
        out["enc"] = [b.attn for b in blocks["enc"]]
    cross = [b.cross for b in blocks["main"] if getattr(b, "cross", None) is not None]
    if cross:
        out["cross"] = cross
    return out


def record_batch(model, inputs: dict, keep: Iterable[str] = ("probs",), grad: bool = False, as_numpy: bool = True):
    """One explicit forward pass of a batch → ``(logits, arrays, grads)``.

    ``arrays[part][name]`` is a list over layers of each recorded ``name`` in ``keep`` (``probs``
    (B, H, Tq, Tk), ``q`` (B, H, Tq, dh), ``k``/``v`` (B, H_kv, Tk, dh)), float32 numpy (or the tensors
    themselves with ``as_numpy=False``). With ``grad``, ``grads[part]`` holds per layer
    d(each input's predicted-class logit)/d(probs) (classifiers: inputs of a batch do not interact,
    so one backward of the sum gives every input its own gradient); otherwise ``grads`` is None.
    """
    keep = tuple(keep)

    def out(t: torch.Tensor):
        return t.detach().float().cpu().numpy() if as_numpy else t.detach()

    parts = attention_modules(model)
    with recording(model, keep_grad=grad), torch.set_grad_enabled(grad):
        logits = model(**inputs)
        if grad:
            target = logits.detach().argmax(-1, keepdim=True)  # (B, 1): each input's predicted class
            model.zero_grad(set_to_none=True)
            logits.gather(-1, target).sum().backward()
        arrays = {p: {name: [out(m.record[name]) for m in mods] for name in keep} for p, mods in parts.items()}
        grads = None
        if grad:
            grads = {p: [out(m.record["probs"].grad if m.record["probs"].grad is not None
                             else torch.zeros_like(m.record["probs"])) for m in mods]
                     for p, mods in parts.items()}
    if grad:
        model.zero_grad(set_to_none=True)
    return logits.detach(), arrays, grads


@torch.no_grad()
def batch_attention(model, inputs: dict, as_numpy: bool = True):
    """One explicit forward pass of a batch → ``(logits, probs)``; probs by part ("self", "cross", "enc",
    each a list over layers of (B, H, T_q, T_k), empty when the model has no such part)."""
    logits, arrays, _ = record_batch(model, inputs, ("probs",), as_numpy=as_numpy)
    probs = {"self": [], "cross": [], "enc": []}
    probs.update({part: rec["probs"] for part, rec in arrays.items()})
    return logits, probs
