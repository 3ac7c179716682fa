"""A TransformerLens 4 ``TransformerBridge`` → the plain transformers model inside it, sharing its weights.

A bridge replaces the model's attention modules with its own components (``JointQKVAttentionBridge`` …), so
transformers' attention interface, which attnviz's capture records, is never called through it. Every bridge
component keeps the module it wraps as ``original_component``. :func:`unbridged_model` builds an empty
(``meta``-device) model of the same class and config and gives it the bridged model's own parameter and
buffer tensors, found by name through those wrappers: no weight is copied, the user's bridge is not touched,
and the copy runs the family's own transformers code, so attnviz traces it whole (x, q, k, v, z, W_*, the
walkthrough). :class:`attnviz.api.from_lens.LensModel` then checks the trace's probabilities against the
bridge's own cache and keeps the cache-only trace if they differ (e.g. after the bridge processed weights).
"""

from __future__ import annotations

__all__ = ["unbridged_model"]


def _resolve(root, dotted: str):
    """``root``'s attribute path ``dotted``, stepping through bridge wrappers where a name is not found."""
    m = root
    for part in dotted.split("."):
        while not hasattr(m, part) and hasattr(m, "original_component"):
            m = m.original_component
        m = getattr(m, part)
    return m


def unbridged_model(bridge):
    """The transformers model a bridge wraps, rebuilt around the same tensors; ``None`` when it cannot be.

    Parameters
    ----------
    bridge : a TransformerLens ``TransformerBridge`` (it has ``original_model``, a transformers model whose
        attention modules it replaced).
    """
    import torch

    hf = getattr(bridge, "original_model", None)
    config = getattr(hf, "config", None)
    if hf is None or config is None:
        return None
    try:
        with torch.device("meta"):
            fresh = type(hf)(config)
        weights = {name: _resolve(hf, name) for name in fresh.state_dict()}
        fresh.load_state_dict(weights, assign=True, strict=True)
        for name, buf in list(fresh.named_buffers()):
            if buf.is_meta:  # non-persistent buffers (rotary tables) are not in the state dict
                owner_name, _, attr = name.rpartition(".")
                fresh.get_submodule(owner_name).register_buffer(attr, _resolve(hf, name), persistent=False)
    except (AttributeError, RuntimeError, TypeError, ValueError, KeyError):
        return None  # a family whose bridge renames modules: the cache-only trace
    if any(t.is_meta for t in (*fresh.parameters(), *fresh.buffers())):
        return None
    return fresh.eval()
