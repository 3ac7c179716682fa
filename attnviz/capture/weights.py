"""A trace's weights as read-only views of the loaded model's own parameters (NumPy and PyTorch only).

A trace shows W_Q, W_K, W_V, W_O (and biases) per layer. Copying them per trace cost ~100 MB a trace on a
135M-parameter model; a view costs nothing, and every trace of one model then shares one weight store: the
model's parameters. A saved trace writes each layer's weights once into its file, so it opens without the model.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["parameter_view", "shared_zeros"]

_VIEWABLE = {torch.float32: np.float32, torch.float16: np.float16}
_ZEROS: dict = {}


def parameter_view(w: torch.Tensor) -> np.ndarray | None:
    """A read-only NumPy view of a CPU float32/float16 tensor (``w.T`` of a parameter: a transposed view), or
    None when it cannot be viewed (another device or dtype: the caller converts it)."""
    if w.device.type != "cpu" or w.dtype not in _VIEWABLE:
        return None
    arr = w.detach().numpy().view()
    arr.flags.writeable = False  # a view of the model's own parameter: nothing may write through it
    return arr


def shared_zeros(n: int, dtype=np.float32) -> np.ndarray:
    """One read-only zero vector per (length, dtype) for every absent bias (a layer without biases)."""
    key = (int(n), np.dtype(dtype).str)
    arr = _ZEROS.get(key)
    if arr is None:
        arr = np.zeros(int(n), dtype)
        arr.flags.writeable = False
        arr = _ZEROS.setdefault(key, arr)
    return arr
