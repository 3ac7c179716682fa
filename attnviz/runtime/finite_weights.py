"""Which of a model's weight tensors holds NaN or infinity, named in the trace's notice.

A shared model folder may carry non-finite weights; the trace's notice then says which tensor (one line),
not only that the attention arrays came out NaN. The pass over the weights runs again only when one of them
changed (torch counts in-place changes: :func:`attnviz.torch_private.tensor_version`), so a keystroke pays a tuple of counters.
"""

from __future__ import annotations

import weakref

from attnviz.torch_private import tensor_version

__all__ = ["first_nonfinite_weight", "note_nonfinite_weight"]


# model → (versions, found); kept beside the model, never on it: a model the user passed in is left exactly as
# it was (no attribute added)
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def first_nonfinite_weight(model) -> tuple[str, int, int] | None:
    """(name, non-finite count, size) of the first parameter or buffer holding NaN/±inf, or None."""
    import torch

    named = [(n, t) for n, t in [*model.named_parameters(), *model.named_buffers()]
             if t.is_floating_point() and t.device.type != "meta"]
    versions = tuple((id(t), tensor_version(t)) for _, t in named)
    try:
        cached = _CACHE.get(model)
    except TypeError:  # not weak-referenceable: checked every time
        cached = None
    if cached is None or cached[0] != versions or any(v is None for _, v in versions):
        found = None
        with torch.no_grad():
            for name, t in named:
                ok = torch.isfinite(t)
                if not bool(ok.all()):
                    found = (name, int(t.numel() - int(ok.sum())), int(t.numel()))
                    break
        cached = (versions, found)
        try:
            _CACHE[model] = cached
        except TypeError:
            pass
    return cached[1]


def note_nonfinite_weight(meta: dict, model) -> None:
    """Name the first non-finite weight of ``model`` in ``meta``'s notice (nothing when all are finite)."""
    from attnviz.capture.finite import name_nonfinite_weight

    found = first_nonfinite_weight(model)
    if found is not None:
        name_nonfinite_weight(meta, *found)
