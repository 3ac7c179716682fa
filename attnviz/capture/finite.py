"""Say so when a trace holds NaN or infinity: a model with NaN weights, or an attention scale that
overflows, otherwise draws an empty map with no word of why."""

from __future__ import annotations

import numpy as np

__all__ = ["all_finite", "nonfinite_arrays", "add_nonfinite_notice", "name_nonfinite_weight", "CAUSE"]

CAUSE = "the model's numbers overflowed or its weights are not finite"


def all_finite(a: np.ndarray) -> bool:
    """Whether a float array holds no NaN or ±inf."""
    if a.dtype == np.float16:
        # numpy has no vector float16 arithmetic (isfinite converts every value: ~4 ns each); NaN and ±inf
        # are exactly the values whose exponent bits are all set, which integer ops test at memory speed
        return not bool(((a.view(np.uint16) & 0x7C00) == 0x7C00).any())
    return bool(np.isfinite(a).all())


def nonfinite_arrays(arrays: dict, known_finite=()) -> dict[str, int]:
    """Names of float arrays holding NaN or ±inf → how many such values; masks (−inf by design) are skipped.

    ``known_finite``: names the caller has proven finite otherwise (e.g. a model's weights, checked once
    per weight version instead of on every run). An array held under several names is read once.
    """
    found: dict[str, int] = {}
    finite_ids: set[int] = set()
    skip = set(known_finite)
    for name, a in arrays.items():
        if name.endswith("mask") or name in skip or not isinstance(a, np.ndarray) or a.dtype.kind != "f":
            continue
        if id(a) in finite_ids or all_finite(a):
            finite_ids.add(id(a))
            continue
        found[name] = a.size - int(np.count_nonzero(np.isfinite(a)))
    return found


def add_nonfinite_notice(meta: dict, arrays: dict, known_finite=()) -> None:
    """Append a one-sentence notice (and the list ``meta["nonfinite"]``) when any array is not finite
    (``known_finite`` as in :func:`nonfinite_arrays`)."""
    found = nonfinite_arrays(arrays, known_finite)
    if not found:
        return
    first, count = next(iter(found.items()))
    more = f" and {len(found) - 1} more arrays" if len(found) > 1 else ""
    text = (f"NaN or infinite values in {first} ({count} of {arrays[first].size}){more}: {CAUSE}, "
            "so these figures show nothing meaningful")
    meta["nonfinite"] = sorted(found)
    meta["notice"] = "; ".join(filter(None, [meta.get("notice"), text]))


def name_nonfinite_weight(meta: dict, name: str, bad: int, size: int) -> None:
    """Say which weight tensor is not finite (``meta["nonfinite_weight"]``), in the trace's one notice line:
    the cause replaces "the numbers overflowed or …" when the arrays' notice is there, else it is added."""
    cause = f"the model's weight {name} holds {bad:,} NaN or infinite values (of {size:,})"
    meta["nonfinite_weight"] = name
    notice = meta.get("notice") or ""
    if CAUSE in notice:
        meta["notice"] = notice.replace(CAUSE, cause)
    else:
        meta["notice"] = "; ".join(filter(None, [notice, f"{cause}: these figures show nothing meaningful"]))
