"""A Hugging Face model's vocabulary projection, computed only for the positions that are shown (issue 18).

An MLM head projects every position onto the vocabulary: BERT-base at T = 128 multiplies (128, 768) by
(768, 30522), ~100 ms of a ~500 ms keystroke, while the prediction panel shows one position's row. A
language-model head's projection is read at the last position only. So, once a model is known to
return its output projection's result as its logits unchanged (checked on its first capture: the
logits *are* that module's output tensor), the projection's input is recorded and the projection
itself runs on:

- ``lm`` heads: the last position only — the same module on the same hidden state, one row;
- ``mlm`` heads: no position during the forward; the trace's ``prediction`` becomes a
  :class:`DeferredPrediction`, softmax(h Wᵀ + b) from the recorded hidden states and the projection's
  own weight and bias, per row when the panel asks and whole when anything asks for the whole array
  (a saved trace, permutation analysis, the what-if lab).

Gradients (``grad=True``) take the ordinary path.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from attnviz.torch_private import tensor_version

__all__ = ["OutputHead", "DeferredPrediction"]

# model → whether its logits are exactly its output projection's output (checked once per model)
_VERIFIED: "weakref.WeakKeyDictionary[nn.Module, bool]" = weakref.WeakKeyDictionary()
# id(tensor) → (weak reference, version, max |w|)
_MAX_ABS: dict = {}
_SAFE_BOUND = 1e37  # |logit| below this: finite, and softmax of finite float32 logits is finite


def _projection(model: nn.Module) -> nn.Linear | None:
    try:
        proj = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None
    # exactly nn.Linear: then F.linear(h, weight, bias) is its whole forward
    return proj if type(proj) is nn.Linear else None


def _max_abs(w: torch.Tensor) -> float:
    """Largest |w| of a parameter, kept beside it with its version: one pass over a 94 MB matrix per model,
    not per keystroke. Kept in a weak map keyed by the tensor's identity (a tensor cannot key a
    WeakKeyDictionary: its == is elementwise), never on the tensor: a user's model gets no attribute."""
    version = tensor_version(w)
    cached = _MAX_ABS.get(id(w))
    if version is not None and cached is not None and cached[0]() is w and cached[1] == version:
        return cached[2]
    value = float(w.detach().abs().max())
    _MAX_ABS[id(w)] = (weakref.ref(w, lambda _, key=id(w): _MAX_ABS.pop(key, None)), version, value)
    return value


class DeferredPrediction:
    """softmax(h Wᵀ + b) over the vocabulary for every position, computed when asked (see module doc).

    ``shape`` (T, V); ``full()`` the whole (T, V) array; ``row(i)`` position ``i`` alone. Both compute
    in float32 as the model does and convert to ``dtype`` as the capture would have.
    """

    def __init__(self, proj: nn.Linear, hidden: torch.Tensor, dtype):
        self._params = (proj.weight, proj.bias)  # the parameters themselves: keys of the |w| cache
        self.weight = proj.weight.detach()
        self.bias = proj.bias.detach() if proj.bias is not None else None
        self._weights_version = tensor_version(self.weight), (tensor_version(self.bias) if self.bias is not None else 0)
        self.hidden = hidden.detach()  # (T, D) the projection's input
        self.shape = (int(hidden.shape[0]), int(self.weight.shape[0]))
        self.dtype = np.dtype(dtype)

    def _probs(self, h: torch.Tensor) -> np.ndarray:
        version = tensor_version(self.weight), (tensor_version(self.bias) if self.bias is not None else 0)
        if None not in version and version != self._weights_version:  # never for a captured model: its weights are not trained in place
            raise RuntimeError("the model's output weights changed after this trace was captured")
        with torch.no_grad():
            logits = F.linear(h, self.weight, self.bias)
            return torch.softmax(logits.float(), dim=-1).cpu().numpy().astype(self.dtype, copy=False)

    def full(self) -> np.ndarray:
        return self._probs(self.hidden)

    def row(self, i: int) -> np.ndarray:
        if not -self.shape[0] <= i < self.shape[0]:
            raise IndexError(f"position {i} is out of range for {self.shape[0]} positions")
        return self._probs(self.hidden[i:i + 1])[0]

    def surely_finite(self) -> bool:
        """True when every logit is provably finite: finite inputs and max_i ‖h_i‖₁·max|W| + max|b| small.

        Then the softmax is finite too, so the capture's NaN/∞ check loses nothing by not seeing it.
        """
        h = self.hidden.float()
        if not bool(torch.isfinite(h).all()):
            return False
        weight, bias = self._params
        bound = float(h.abs().sum(dim=-1).max()) * _max_abs(weight)
        if bias is not None:
            bound += _max_abs(bias)
        return bool(np.isfinite(bound)) and bound < _SAFE_BOUND


class OutputHead:
    """Context of one forward: trims the output projection of an ``lm`` / ``mlm`` head (see module doc).

    Parameters
    ----------
    model : the transformers model.
    head : :func:`attnviz.hf.describe.head_of` of its architecture.
    enabled : False for gradient captures (the ordinary path).
    """

    def __init__(self, model: nn.Module, head: str, enabled: bool = True):
        self.model, self.head = model, head
        self.proj = _projection(model) if enabled and head in ("lm", "mlm") else None
        self.trimming = self.proj is not None and _VERIFIED.get(model, False)
        self.verifying = self.proj is not None and model not in _VERIFIED
        self.seen: dict = {}
        self._handle = None

    def __enter__(self):
        if self.trimming:
            self._handle = self.proj.register_forward_pre_hook(self._trim)
        elif self.verifying:
            self._handle = self.proj.register_forward_hook(self._record)
        return self

    def __exit__(self, *exc):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _trim(self, module, args):
        hidden = args[0]
        self.seen["hidden"] = hidden
        keep = hidden[..., -1:, :] if self.head == "lm" else hidden[..., :0, :]
        return (keep, *args[1:])

    def _record(self, module, args, out):
        self.seen["out"] = out

    def prediction(self, logits, dtype, fallback):
        """The trace's ``prediction``: an array, a :class:`DeferredPrediction`, or ``fallback(logits)``
        (the ordinary computation) when nothing was trimmed."""
        if self.verifying:
            _VERIFIED[self.model] = logits is not None and self.seen.get("out") is logits
        hidden = self.seen.get("hidden")
        if not self.trimming or hidden is None or logits is None or hidden.dim() != 3 or hidden.shape[0] != 1:
            return fallback(logits)
        if self.head == "mlm" and logits.shape[-2] == 0:
            return DeferredPrediction(self.proj, hidden[0], dtype)
        if self.head == "lm" and logits.shape[-2] == 1:
            return fallback(logits)  # one row: the last position's, as the ordinary path keeps
        raise RuntimeError(f"{type(self.model).__name__}: the trimmed output head gave logits {tuple(logits.shape)}")
