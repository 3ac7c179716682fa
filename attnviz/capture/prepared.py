"""Model inputs made ready for a capture: what every model adapter's ``prepare_*`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Prepared"]


@dataclass
class Prepared:
    """Model inputs for a batch of one, the labels of its positions, and notices for the user.

    ``inputs`` are the keyword arguments of the model's forward (tensors on the model's device);
    ``tokens`` label the traced positions (the decoder's for an encoder–decoder, whose encoder
    positions are ``src_tokens``).
    """

    inputs: dict
    tokens: list[str]
    src_tokens: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    image: np.ndarray | None = None  # preprocessed image (H, W, C) in [0, 1], for overlays
