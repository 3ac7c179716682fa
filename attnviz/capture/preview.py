"""What a capture reports while the forward still runs: one layer's probabilities, made where they are computed.

Hugging Face decoders and encoders call the preview as soon as a layer's attention is computed
(:func:`attnviz.hf.capture.capture_hf`); the app shows it in the head map before the trace is complete. The
same object travels unchanged from the capture to the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LayerPreview"]


@dataclass(frozen=True)
class LayerPreview:
    """One layer's attention during the forward.

    Attributes
    ----------
    layer : its index; n_layers : how many layers the forward computes.
    probs : (H, Tq, Tk) float32, a copy of what the model computed (nothing the forward does later changes it).
    tokens : the labels of the positions.
    masked : (Tq, Tk) bool, the cells its mask blocked; None: no mask.
    """

    layer: int
    n_layers: int
    probs: np.ndarray
    tokens: tuple[str, ...]
    masked: np.ndarray | None = None
