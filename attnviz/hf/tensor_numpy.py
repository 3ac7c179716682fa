"""Tensors captured from a Hugging Face model → numpy, each distinct tensor once (split from
:mod:`attnviz.hf.capture`)."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TensorsToNumpy"]


class TensorsToNumpy:
    """Tensors → numpy, once per distinct tensor (a post-LN block input is the previous block's output;
    ALBERT's layers share weights; every layer gets the same mask)."""

    def __init__(self, dtype):
        self.dtype, self.seen = np.dtype(dtype), {}

    def __call__(self, t: torch.Tensor, dtype=None) -> np.ndarray:
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if t.dtype == torch.float16 and dtype == np.float32:
            dtype = np.dtype(np.float16)  # kept in the dtype the model computed in (float32 would add nothing)
        key = (t.data_ptr(), t.shape, t.stride(), dtype)
        arr = self.seen.get(key)
        if arr is None:
            t = t.detach()
            if t.device.type == "cpu" and t.dtype == torch.float16 and dtype == np.float16:
                arr = self.seen[key] = t.numpy()  # already compact (a layer not asked for): shared, not copied
                return arr
            if t.device.type != "cpu" or t.dtype not in (torch.float32, torch.float64):  # read as it is on CPU
                t = t.to("cpu", torch.float32)  # (float64: a log-sum-exp attnviz computed, asked for in float64)
            arr = self.seen[key] = t.numpy().astype(dtype, copy=False)
        return arr

    def mask(self, mask, Tq: int, Tk: int) -> np.ndarray:
        """The additive mask as 0 / −inf (T, T); transformers uses the dtype's minimum for −inf."""
        if mask is None:
            key = ("none", Tq, Tk)
            return self.seen.setdefault(key, np.zeros((Tq, Tk), np.float32))
        key = ("mask", mask.data_ptr(), tuple(mask.shape))
        if key not in self.seen:
            m = mask.detach().cpu()
            m = m.reshape(-1, *m.shape[-2:])[0]  # (…, Tq|1, Tk) → first batch/head row block
            if m.dtype == torch.bool:
                arr = np.where(m.numpy(), 0.0, -np.inf)
            else:
                arr = m.float().numpy()
                arr = np.where(arr <= torch.finfo(mask.dtype).min / 2, -np.inf, arr)
            self.seen[key] = np.ascontiguousarray(np.broadcast_to(arr, (Tq, Tk)), dtype=np.float32)
        return self.seen[key]
