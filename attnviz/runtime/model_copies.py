"""A private copy of a model for background data-set work, kept between calls.

Data-set views run the model on a worker thread while the app's model lane may be running the same
model for the current input. A torch module records one pass at a time (``recording`` gives every
attention module one dict), so background work uses its own copy, loaded from the same reference,
and one lock serialises the jobs that share it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["private_model", "model_ref", "model_stamp", "MODEL_LOCK"]

MODEL_LOCK = threading.RLock()  # hold while running a private copy
_CACHE: OrderedDict = OrderedDict()
_KEEP = 2  # models kept loaded (the current one and the previous, for switching back)


def model_ref(trace=None, loaded=None) -> str | None:
    """What loads the model again: the app's loaded model's directory, else the trace's model name."""
    if loaded is not None:
        return str(loaded.path) if getattr(loaded, "path", None) is not None else loaded.name
    if trace is not None:
        return trace.description.model_path or trace.description.model_name
    return None


def model_stamp(ref: str) -> float | None:
    """When the model's files last changed (a model re-trained into the same folder is a new model)."""
    from attnviz.models.checkpoint import resolve_model_path

    try:
        path = resolve_model_path(ref)
        return max(f.stat().st_mtime for f in path.iterdir() if f.is_file())
    except Exception:  # noqa: BLE001 - unknown or unreadable: loading will say why
        return None


def private_model(ref: str):
    """The LoadedModel for ``ref`` (bundled name or directory) on the CPU, loaded once and cached.

    Call it, and run the model, while holding :data:`MODEL_LOCK`.
    """
    from attnviz.runtime.pipeline import load_model

    with MODEL_LOCK:
        key = (ref, model_stamp(ref))
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        loaded = load_model(ref, device="cpu")
        _CACHE[key] = loaded
        while len(_CACHE) > _KEEP:
            _CACHE.popitem(last=False)
        return loaded
