"""The steps every capture shares: the storage dtype, the backward pass to the target, and finishing the Trace.

attnviz's own models (:mod:`attnviz.capture.record`), Hugging Face decoders and encoders
(:mod:`attnviz.hf.capture`), encoder–decoders (:mod:`attnviz.hf.encdec_capture`), given attention maps
(:mod:`attnviz.api.from_attentions`) and the training snapshots each collect their arrays their own way and then
hand them with a :class:`~attnviz.capture.description.TraceDescription` to :func:`finish_trace`, so the meta of
every trace is written, checked and completed in one place. NumPy only: tensors arrive as objects with methods.
"""

from __future__ import annotations

import numpy as np

from attnviz.capture.description import TraceDescription
from attnviz.capture.finite import add_nonfinite_notice
from attnviz.capture.storage_notice import half_storage_notice
from attnviz.capture.on_demand import attach as attach_on_demand
from attnviz.capture.trace import LARGE_T, Trace, layer_prefix
from attnviz.errors import AttnvizError, InputError

__all__ = ["finish_trace", "storage_dtypes", "backward_to_target", "grad_array", "PRECISION_CHOICES"]

PRECISION_CHOICES = ("auto", "float32", "float16")


def storage_dtypes(precision: str, n_tokens: int, on_demand: bool = False) -> tuple[type, type]:
    """(dtype of the stored arrays, dtype of q, k and lse of layers recomputed on demand).

    "auto" keeps float16 above :data:`LARGE_T` tokens where (H, T, T) maps are kept (they dominate the memory);
    a capture on demand keeps what the model computed as it is (float32: a float16 copy cost 8 % of the forward
    at T = 4,096 and raised the peak). q, k and lse decide every recomputed probability: float16 only when asked.
    """
    if precision not in PRECISION_CHOICES:
        raise InputError(f"precision must be one of {', '.join(PRECISION_CHOICES)}, not {precision!r}")
    half = precision == "float16" or (precision == "auto" and n_tokens > LARGE_T and not on_demand)
    return (np.float16 if half else np.float32), (np.float16 if precision == "float16" else np.float32)


def backward_to_target(model, logits, target: int | None) -> None:
    """d(logit of ``target``)/d(everything) by one backward pass; the target is a class of a (1, C) output or
    the next token after the last position of a (1, T, V) one, the top-scoring one when ``target`` is None."""
    flat = logits[0] if logits.dim() == 2 else logits[0, -1]
    idx = int(flat.argmax()) if target is None else int(target)
    model.zero_grad(set_to_none=True)
    flat[idx].backward()


def grad_array(probs, convert, dtype) -> np.ndarray:
    """The gradient of one layer's (1, H, Tq, Tk) probabilities as (H, Tq, Tk), zeros when the target does not
    depend on them (no gradient reached the tensor)."""
    g = probs.grad
    return convert(g[0]) if g is not None else np.zeros(tuple(probs.shape[1:]), dtype)


def finish_trace(tokens, arrays: dict, description: TraceDescription, context: dict | None = None, *,
                 notices=(), deferred: dict | None = None, spill=None, known_finite=None) -> Trace:
    """The Trace of a capture: its description written as ``meta``, checked against the arrays, completed.

    Parameters
    ----------
    tokens : labels of the (decoder) positions.
    arrays : name → array (:mod:`attnviz.capture.description` lists the names).
    description : what the capture computed; its stated fields win over ``context``'s.
    context : what the run was asked (model name, input text, the input's notice …), as meta keys.
    notices : lines the capture adds to the context's ``notice`` (joined with "; ", repeats once).
    deferred : arrays computed when asked for; layers described in ``description.on_demand`` are attached.
    spill : the capture's :class:`~attnviz.capture.spill.SpillStore`, closed here when nothing went to disk.
    known_finite : None to skip the NaN/±inf check, else the names proven finite otherwise (checked names
        are listed in ``meta["nonfinite"]`` and said in the notice).
    """
    context = dict(context or {})
    meta = {**context, **description.to_meta()}
    lines = [context.get("notice"), description.notice, *notices, half_storage_notice(description)]
    joined = "; ".join(dict.fromkeys(n for n in lines if n))
    meta.pop("notice", None)
    if joined:
        meta["notice"] = joined
    desc = TraceDescription.from_meta(meta, "the capture")  # the context's keys checked too
    deferred = {} if deferred is None else deferred
    if desc.on_demand:
        attach_on_demand(arrays, meta, deferred)
    _check_layers(desc, arrays, deferred)
    if known_finite is not None:
        add_nonfinite_notice(meta, arrays, known_finite)
    if spill is not None and not spill.files:
        spill.close()  # everything fitted in memory
        spill = None
    return Trace(tokens=list(tokens), meta=meta, arrays=arrays, deferred=deferred, spill=spill)


def _check_layers(desc: TraceDescription, arrays: dict, deferred: dict) -> None:
    """Every layer the description counts has probabilities with its head count, and no more layers exist."""
    counts = {"self": desc.n_layers, "enc": desc.n_enc_layers}
    for part, n in counts.items():
        for i in (*range(n), n):
            key = layer_prefix(i, part) + "probs"
            have = key in arrays or key in deferred
            if have != (i < n):
                raise AttnvizError(f"the capture describes {n} {part} layers but {'has no' if i < n else 'also has'} "
                                   f"{key}: the trace is not made")
            if have:
                shape = arrays[key].shape if key in arrays else deferred[key].shape
                if int(shape[0]) != desc.n_heads:
                    raise AttnvizError(f"the capture describes {desc.n_heads} heads but {key} has {shape[0]}: "
                                       "the trace is not made")
