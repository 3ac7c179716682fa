"""The opening trace stored with a bundled model, so the app can draw its first map before torch loads.

``make assets`` runs each text model on its task's example input with the app's settings and stores
the Trace beside the weights as ``opening.npz``, tied to them by the SHA-256 of ``model.safetensors``.
:func:`read_opening_trace` hands it out only while that hash still matches: retrained weights make
the stored trace stale, and a stale trace is never shown (the live model draws the map instead).
Reading it needs numpy only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["OPENING_FILE", "GRAD_MAX_PARAMS", "wants_gradients", "weights_digest", "write_opening_trace",
           "read_opening_trace"]

OPENING_FILE = "opening.npz"
WEIGHTS_FILE = "model.safetensors"
GRAD_MAX_PARAMS = 20_000_000


def wants_gradients(loaded) -> bool:
    """Capture attention gradients for classifiers small enough to backpropagate on every keystroke."""
    if loaded.config.head != "classify":
        return False
    return sum(p.numel() for p in loaded.model.parameters()) <= GRAD_MAX_PARAMS


def weights_digest(model_dir) -> str | None:
    """SHA-256 (hex) of the folder's ``model.safetensors``, or None when it has none."""
    path = Path(model_dir) / WEIGHTS_FILE
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_opening_trace(model_dir) -> Path | None:
    """Trace the model in ``model_dir`` on its task's example text and store it; None for other models.

    Vision models open on a sample image chosen in the app, and models without a built-in task have
    no example: neither gets an opening trace.
    """
    from attnviz.runtime.native import task_of
    from attnviz.runtime.pipeline import load_model, run_trace

    model_dir = Path(model_dir)
    loaded = load_model(model_dir, device="cpu")
    task = task_of(loaded)
    example = task.example_input() if task is not None else None
    if not isinstance(example, str):
        return None
    trace = run_trace(loaded, text=example, truncate=True, grad=wants_gradients(loaded))
    trace.meta.update(weights_sha256=weights_digest(model_dir), opening_text=example)
    out = model_dir / OPENING_FILE
    trace.save(out)
    return out


def read_opening_trace(model_dir, text: str | None = None):
    """The stored opening Trace of ``model_dir`` if it matches the weights (and ``text``, when given)."""
    from attnviz.capture.trace import Trace
    from attnviz.errors import InputError

    path = Path(model_dir) / OPENING_FILE
    if not path.is_file():
        return None
    try:
        trace = Trace.load(path)
    except InputError:
        return None
    if trace.description.weights_sha256 != weights_digest(model_dir):
        return None
    if text is not None and trace.description.opening_text != text:
        return None
    return trace
