"""Attention rollout (Abnar & Zuidema 2020): how much each input token flows into each position.

Per layer the heads are fused into one (T, T) matrix, the residual connection is modelled by mixing in
the identity, rows are renormalised, and the layers are multiplied from the bottom up:

    Â_l = rownorm((1 - r) · fuse_h(A_l) + r · I)          rollout = Â_L · … · Â_start

Row i of the result tells how much of position i's representation after the last layer came from
each input token.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnviz.errors import InputError

__all__ = ["compute_rollout", "fuse_heads", "discard_lowest", "ProbLayers", "DeferredRollout", "MAX_ROLLOUT_T"]

# rollout holds (T, T) float64 products and one layer's (H, T, T) at a time: refused above this length
MAX_ROLLOUT_T = 4096

FUSIONS = ("mean", "max", "min")


class ProbLayers(Sequence):
    """Per-layer attention probabilities, (H, Tq, Tk) float64, fetched one layer at a time.

    A long float16 trace (L=12, H=12, T=1024) would take over a gigabyte as float64 all at once;
    the analyses walk the layers one by one, so only one converted layer is alive at a time.
    """

    def __init__(self, source, part: str = "self"):
        if hasattr(source, "probs") and hasattr(source, "n_layers"):
            n = source.layers_in(part)
            self._get, self._n = (lambda i: source.probs(i, part)), n
            self._shape = lambda i: source.probs_shape(i, part)
        else:
            arrays = list(source)
            self._get, self._n = arrays.__getitem__, len(arrays)
            self._shape = None
        if self._n == 0:
            raise InputError("no attention layers given")

    def __len__(self) -> int:
        return self._n

    def shape(self, i: int) -> tuple:
        """(H, Tq, Tk) of layer ``i`` without computing it when the source is a Trace."""
        return tuple(self._shape(i)) if self._shape is not None else np.shape(self._get(i))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        p = np.asarray(self._get(i), dtype=np.float64)
        if p.ndim != 3:
            raise InputError(f"layer {i}: attention must be (heads, queries, keys), got shape {p.shape}")
        return p


def fuse_heads(probs: np.ndarray, fusion: str = "mean") -> np.ndarray:
    """Fuse the heads of one layer, (H, Tq, Tk) → (Tq, Tk), by their mean, max or min."""
    if fusion not in FUSIONS:
        raise InputError(f"head fusion {fusion!r} must be one of {', '.join(FUSIONS)}")
    return getattr(np, fusion)(np.asarray(probs, dtype=np.float64), axis=0)


def discard_lowest(fused: np.ndarray, fraction: float) -> np.ndarray:
    """Zero the lowest ``fraction`` of the off-diagonal weights of a fused (T, T) layer.

    The ranking runs over the whole matrix, as in the widely used jacobgil/vit-explain rollout.
    That implementation protects only entry (0, 0), the CLS token's weight on itself; we protect the
    whole diagonal, because the self weight is the one the residual term adds to anyway and a token
    with its self weight removed would be judged by the other tokens alone. The count is
    ``int(fraction · T · (T - 1))`` off-diagonal entries; ties are broken by position (stable sort).
    """
    if not 0.0 <= fraction < 1.0:
        raise InputError(f"discard fraction {fraction} must be in [0, 1)")
    out = np.array(fused, dtype=np.float64)
    T = out.shape[0]
    n = int(fraction * T * (T - 1))
    if n == 0:
        return out
    off = ~np.eye(T, dtype=bool)
    values = out[off]  # (T·(T-1),) off-diagonal entries, row-major
    lowest = np.argsort(values, kind="stable")[:n]
    values[lowest] = 0.0
    out[off] = values
    return out


def compute_rollout(
    probs,
    fusion: str = "mean",
    residual: float = 0.5,
    start_layer: int = 0,
    discard: float = 0.0,
    part: str = "self",
) -> np.ndarray:
    """Attention rollout over the layers ``start_layer`` … L-1.

    Parameters
    ----------
    probs : list of (H, T, T) arrays, one per layer (or a Trace: its ``part`` attention is used).
    fusion : how the heads of a layer are fused: "mean" (Abnar & Zuidema), "max" or "min".
    residual : weight r of the identity that models the skip connection, Â = (1-r)·A + r·I.
        0.5 is the paper's choice (the residual and the attention contribute equally).
    start_layer : first layer multiplied in; earlier layers are treated as identity.
    discard : fraction of the lowest off-diagonal fused weights set to zero before the residual
        is added (see :func:`discard_lowest`).
    part : "self" or "enc" when ``probs`` is a Trace (cross-attention is not square: no rollout).

    Returns
    -------
    (T, T) float64 array; row i sums to 1 and gives the share of each input token in position i.
    """
    layers = ProbLayers(probs, part)
    T = layers.shape(0)[-1] if hasattr(layers, "shape") else None
    if T is not None and T > MAX_ROLLOUT_T:
        raise InputError(f"attention rollout multiplies (T, T) maps layer by layer: at most {MAX_ROLLOUT_T:,} "
                         f"tokens (this input has {T:,})")
    if not 0.0 <= residual <= 1.0:
        raise InputError(f"residual weight {residual} must be in [0, 1]")
    if not 0 <= start_layer < len(layers):
        raise InputError(f"start layer {start_layer} is out of range 0..{len(layers) - 1}")
    T = layers[start_layer].shape[-1]
    eye = np.eye(T)
    result = eye
    for i in range(start_layer, len(layers)):
        p = layers[i]
        if p.shape[1:] != (T, T):
            raise InputError("rollout needs square self-attention of one length in every layer")
        fused = discard_lowest(fuse_heads(p, fusion), discard)
        mixed = (1.0 - residual) * fused + residual * eye
        rows = mixed.sum(axis=-1, keepdims=True)  # (T, 1)
        # A row can only sum to 0 when residual is 0 and the whole row was discarded or masked:
        # keep it zero rather than divide by zero.
        mixed = np.divide(mixed, rows, out=np.zeros_like(mixed), where=rows > 0)
        result = mixed @ result  # later layers act on the left: Â_l · (Â_{l-1} · …)
    return result


class DeferredRollout:
    """A trace's default ``rollout`` (T, T) float32, computed when first asked for (``Trace.deferred``).

    Issue 18: the app's keystroke computed it for every run (BERT-base at T = 128: ~6 ms, and 12 layers
    converted to float64) although the views on screen by default do not read it (the Rollout view
    computes its own, with its settings). The arrays are the trace's own probabilities, referenced
    (not copied) when the trace is made: the result is exactly ``compute_rollout(trace.all_probs())``.
    """

    def __init__(self, trace):
        # stored maps are referenced; maps recomputed on demand from q and k (long inputs) are read one layer
        # at a time through Trace.probs when the rollout is computed
        self._probs = [trace.arrays.get(f"L{i}.probs") for i in range(trace.n_layers)]
        self._trace = trace if any(p is None for p in self._probs) else None
        T = trace.probs_shape(0)[-1]
        self.shape = (T, T)
        self._value: np.ndarray | None = None

    def full(self) -> np.ndarray:
        if self._value is None:
            if self._trace is not None:
                self._value = compute_rollout(self._trace).astype(np.float32)
            else:
                probs = [np.asarray(p, dtype=np.float32) for p in self._probs]  # as Trace.all_probs gives them
                self._value = compute_rollout(probs).astype(np.float32)
        return self._value

    def row(self, i: int) -> np.ndarray:
        return self.full()[i]
