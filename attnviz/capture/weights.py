"""A trace's weights as read-only views of the loaded model's own parameters (NumPy and PyTorch only).

A trace shows W_Q, W_K, W_V, W_O (and biases) per layer. Copying them per trace cost ~100 MB a trace on a
135M-parameter model; a view costs nothing, and every trace of one model then shares one weight store: the
model's parameters. A weight NumPy cannot view (bfloat16: NumPy has no such dtype; a GPU tensor) is converted
to float32 once per model and shared by every trace until the weight changes (:func:`converted_once`). A saved
trace writes each layer's weights once into its file, so it opens without the model.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch

from attnviz.torch_private import tensor_version

__all__ = ["parameter_view", "shared_zeros", "converted_once"]

_VIEWABLE = {torch.float32: np.float32, torch.float16: np.float16}
_ZEROS: dict = {}
# owner object (an attention module) → {name: (the weight's stamp, its float32 array)}
_CONVERTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


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


def converted_once(owner, name: str, w: torch.Tensor) -> np.ndarray:
    """``w`` as a read-only float32 array, converted once per (``owner``, ``name``) and shared by every trace while
    the weight is the same tensor, unchanged: its storage, layout and in-place change counter (a fine-tuning step
    changes it). ``owner`` is an object that lives as long as the weight (the module holding it as a parameter;
    None: not cached, for a tensor made per call, whose address a later one may take); without a change counter
    (:func:`attnviz.torch_private.tensor_version` is None) every call converts."""
    version = tensor_version(w)
    stamp = (version, w.data_ptr(), tuple(w.shape), tuple(w.stride()), str(w.dtype), str(w.device))
    try:
        slot = _CONVERTED.setdefault(owner, {}) if owner is not None else {}
    except TypeError:  # an owner that takes no weak reference: not cached
        slot = {}
    kept = slot.get(name)
    if version is not None and kept is not None and kept[0] == stamp:
        return kept[1]
    arr = w.detach().to("cpu", torch.float32).numpy()
    arr.flags.writeable = False  # shared by every trace of the model
    if version is not None:
        slot[name] = (stamp, arr)
    return arr
