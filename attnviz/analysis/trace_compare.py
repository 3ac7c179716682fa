"""Two traces as one, for the side-by-side "compare" figure: two inputs on one model, or one input on two
models of the same shape (base vs fine-tuned). The pair is one Trace (the first trace's arrays as they are,
the second's attention under ``cmp.``), so the one renderer draws it like any other view."""

from __future__ import annotations

import dataclasses

import numpy as np

from attnviz.capture.finish import finish_trace
from attnviz.capture.trace import Trace, layer_prefix
from attnviz.errors import InputError

__all__ = ["pair_traces", "check_comparable", "comparable", "compared_probs", "PARTS"]

PARTS = ("self", "cross", "enc")
_OTHER = "cmp."


def _label(trace, fallback: str) -> str:
    described = trace.description
    text = described.input_text
    name = str(described.model_name or fallback)
    return f"{name}: {text}" if isinstance(text, str) and text else name


def pair_traces(first, second, labels: tuple[str, str] | None = None) -> Trace:
    """One Trace holding both traces' attention probabilities, checked to be comparable cell by cell.

    Parameters
    ----------
    first, second : Traces with the same parts, layers, heads and token count (InputError in one line
        naming the first difference otherwise).
    labels : what the figure calls them (default: model name and input text).
    """
    check_comparable(first, second)
    arrays = {}
    for part in _parts(first):
        for i in range(_layers(first, part)):
            key = layer_prefix(i, part)
            arrays[key + "probs"] = first.probs(i, part)
            arrays[_OTHER + key + "probs"] = second.probs(i, part)
            if key + "mask" in first.arrays:
                arrays[key + "mask"] = first.arrays[key + "mask"]
    if "src_tokens" in first.arrays:
        arrays["src_tokens"] = first.arrays["src_tokens"]
    names = labels or (_label(first, "first"), _label(second, "second"))
    # the pair holds whole maps: the first's on-demand rule (if any) describes arrays it does not hold
    context = {k: v for k, v in first.meta.items() if k != "on_demand"}
    description = dataclasses.replace(first.description, on_demand=None, compare={
        "labels": [str(names[0]), str(names[1])], "other_tokens": list(second.tokens)})
    return finish_trace(first.tokens, arrays, description, context)


def check_comparable(first, second) -> None:
    """InputError in one line naming the first difference that keeps two traces from being compared cell
    by cell (kind, parts, layers, heads or token count); None when they can be."""
    if first.kind != second.kind:
        raise InputError(f"cannot compare {first.kind} and {second.kind} traces: compare needs models of the "
                         "same shape")
    for part in _parts(first):
        n1, n2 = _layers(first, part), _layers(second, part)
        if n1 != n2:
            raise InputError(f"cannot compare: {n1} and {n2} {part}-attention layers (compare needs two traces "
                             "of models of the same shape)")
        for i in range(n1):
            a, b = first.probs_shape(i, part), second.probs_shape(i, part)
            if a != b:
                raise InputError(f"cannot compare: layer {i} ({part}) is {'×'.join(map(str, a))} in one trace and "
                                 f"{'×'.join(map(str, b))} in the other (heads × queries × keys): compare needs the same "
                                 "heads and token count")


def comparable(first, second) -> str | None:
    """Why ``first`` and ``second`` cannot be compared (:func:`check_comparable`'s message), or None."""
    try:
        check_comparable(first, second)
    except InputError as exc:
        return str(exc)
    return None


def _parts(trace) -> list[str]:
    return ["self"] + (["cross"] if trace.has_cross else []) + (["enc"] if trace.n_enc_layers else [])


def _layers(trace, part: str) -> int:
    return trace.layers_in(part) if part in _parts(trace) else 0


def compared_probs(pair: Trace, layer: int, part: str = "self", head: int = 0):
    """(first map, second map, second − first) of one head: each (Tq, Tk) float32."""
    key = layer_prefix(layer, part) + "probs"
    a = np.asarray(pair[key][head], np.float32)
    b = np.asarray(pair[_OTHER + key][head], np.float32)
    return a, b, b - a
