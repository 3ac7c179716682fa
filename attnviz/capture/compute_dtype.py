"""The dtype rule of a trace (issue 34): arrays keep the precision the model computed in.

A model runs in its checkpoint's own dtype (float16, bfloat16 or float32; ``--dtype`` / ``attnviz.load(...,
dtype=)`` choose another; a device without a kernel in that dtype runs float32 and says so in one line:
:mod:`attnviz.hf.dtype_support`). What a trace keeps of that run:

* **float32 model**: float32 arrays and float32 probabilities (``precision="float16"`` stores float16 on request).
* **float16 model**: q, k, v, x and the other captured arrays are the model's own float16 tensors, and
  :meth:`~attnviz.capture.trace.Trace.probs` returns **float16** blocks. A short input (eager attention) gives
  the probabilities the model's eager attention computed (softmax in float32, rounded to float16 by the model).
  A long one (on demand) recomputes them the way torch's CPU SDPA kernel computes them: q·kᵀ, the softmax and
  its log-sum-exp in float32 from the float16 q and k (the kernel returns its log-sum-exp in float32 and its
  output rounded to float16: checked on torch 2.13), rounded once to float16 at the end. For half-precision
  inputs that kernel's log-sum-exp is off by up to ~8e-5 (its fast exponential; 3e-7 for float32 inputs), so a
  long input's weights are within that (relative) of a float64 computation from the same q and k: one float16
  unit at most, a few percent of cells rounded the other way (figures: ``tests/hf/test_compute_dtype.py``).
* **bfloat16 model**: NumPy has no bfloat16, so the arrays are **float32** holding every bfloat16 value exactly
  (the upcast adds nothing and loses nothing), and probabilities are float32: a short input's are the eager
  attention's own bfloat16-rounded values, a long input's the float32 computation of the SDPA kernel (as for
  float16, without the final rounding). Where the dtype is shown this is said in one line
  (:func:`kept_in_words`). Storing bfloat16 as float32 costs twice the bytes of q, k and x.

``meta["compute_dtype"]`` records the dtype the weights ran in; :func:`probs_dtype` turns it into the dtype of
every probability block a trace returns, :func:`array_bytes` into the bytes of one kept element (the memory
estimate counts those, :mod:`attnviz.models.memory`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMPUTE_DTYPES", "probs_dtype", "array_bytes", "kept_in_words"]

COMPUTE_DTYPES = ("float32", "float16", "bfloat16", "float64")


def probs_dtype(compute: str | None) -> np.dtype:
    """The NumPy dtype of a trace's probability blocks for a model that computed in ``compute`` (None: float32,
    a trace that does not say, e.g. attnviz's own models or one saved before the rule)."""
    return np.dtype(np.float16 if compute == "float16" else np.float32)


def array_bytes(compute: str | None) -> int:
    """Bytes of one element of what a capture keeps of a model computing in ``compute``: 2 for float16, else 4
    (bfloat16 is kept as float32)."""
    return 2 if compute == "float16" else 4


def kept_in_words(compute: str | None) -> str:
    """One line saying the dtype of the trace's arrays when it is not the model's own ("" when it is)."""
    if compute == "bfloat16":
        return "arrays kept in float32 (NumPy has no bfloat16; the values are exact)"
    return ""
