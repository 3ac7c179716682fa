"""Capture every intermediate of a forward pass into a Trace (Qt-free).

``Trace`` and ``Prepared`` need only numpy; ``capture`` and ``recording`` run models and bring in torch,
so they are imported on first use (the app reads a stored Trace before torch has loaded).
"""

from attnviz.capture.prepared import Prepared
from attnviz.capture.trace import Trace, layer_prefix

__all__ = ["Trace", "Prepared", "capture", "recording", "layer_prefix"]


def __getattr__(name: str):
    if name in ("capture", "recording"):
        from attnviz.capture import record

        return getattr(record, name)
    raise AttributeError(f"module 'attnviz.capture' has no attribute {name!r}")
