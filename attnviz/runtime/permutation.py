"""Run an input and its shuffle through a real model and compare their attention (the equivariance check).

The comparison itself is :func:`attnviz.analysis.permutation.compare_permuted`; this module runs the model.
"""

from __future__ import annotations

import numpy as np

from attnviz.analysis.permutation import compare_permuted
from attnviz.errors import InputError

__all__ = ["check_permutation"]


def check_permutation(model, ids, perm) -> dict:
    """Capture ``ids`` and ``ids[:, perm]`` and compare the attention maps (see ``compare_permuted``).

    Parameters
    ----------
    model : an attnviz text model (encoder or decoder).
    ids : (1, T) LongTensor of token ids.
    perm : a permutation of 0 … T-1; the permuted input is ``ids[:, perm]``.
    """
    import torch

    from attnviz.capture.record import capture

    if getattr(model, "cfg", None) is None or model.cfg.kind not in ("encoder", "decoder"):
        raise InputError("the permutation check needs a text encoder or decoder")
    ids = torch.as_tensor(ids)
    if ids.dim() != 2 or ids.shape[0] != 1:
        raise InputError(f"ids must have shape (1, T), got {tuple(ids.shape)}")
    T = ids.shape[1]
    perm = np.asarray(perm, dtype=np.int64)
    if perm.shape != (T,) or not np.array_equal(np.sort(perm), np.arange(T)):
        raise InputError(f"{perm.tolist()} is not a permutation of 0..{T - 1}")
    permuted = ids[:, torch.as_tensor(perm, device=ids.device)]

    def run(x: torch.Tensor):
        return capture(model, {"ids": x}, [str(int(t)) for t in x[0]], precision="float32")

    return compare_permuted(run(ids), run(permuted), perm)
