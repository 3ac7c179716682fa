"""Capture every intermediate of a forward pass into a Trace (Qt-free)."""

from attnviz.capture.prepared import Prepared
from attnviz.capture.record import capture, recording
from attnviz.capture.trace import Trace, layer_prefix

__all__ = ["Trace", "Prepared", "capture", "recording", "layer_prefix"]
