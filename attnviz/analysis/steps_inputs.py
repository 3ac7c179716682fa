"""What the six steps and the matrix form read from one attention block of a trace, in float64, checked.

:mod:`attnviz.analysis.steps` recomputes attention from these; here are only the reads (a block's input, one
head's weight columns, the keys' input rows, the mask and bias rows), the checks that turn a bad index or a
trace without queries, keys and values into one line for the user, and the soft cap both computations apply.
"""

from __future__ import annotations

import numpy as np

from attnviz.capture.trace import layer_prefix
from attnviz.errors import InputError

__all__ = ["PARTS", "NEEDS", "as_f64", "block_f64", "require_qkv", "query_heads_sharing", "soft_cap", "bias_row", "check_block",
           "kv_input", "token_labels", "head_slice", "read_mask_rows"]

PARTS = ("self", "cross", "enc")


def as_f64(trace, key: str) -> np.ndarray:
    """The trace's array ``key`` as float64 (the steps recompute in double precision)."""
    return np.asarray(trace[key], dtype=np.float64)


def block_f64(trace, key: str, heads, rows) -> np.ndarray:
    """``trace[key][heads, rows]`` of a per-head (H, T, dh) array as float64, reading only those positions.

    A stored or memory-mapped array is sliced. q or k before the rotation, which a long trace does not store
    but recomputes by undoing the rotation (``meta["recomputed"]``, :mod:`attnviz.capture.recomputed`), is
    undone for these rows alone with the rule's own function: the walkthrough of one query or the matrix form
    of a window never rebuilds every position (16,384 of them) to show a few.
    """
    pending = trace.deferred.get(key) if key not in trace.arrays else None
    if pending is not None and getattr(pending, "kind", None) == "unrotated":
        from attnviz.capture.recomputed import KINDS

        rotated, cos, sin = pending.sources  # (H, T, dh), (T, d_rot), (T, d_rot)
        return np.asarray(KINDS["unrotated"][0](rotated[heads, rows], cos[rows], sin[rows]), dtype=np.float64)
    return np.asarray(trace[key][heads, rows], dtype=np.float64)


NEEDS = ("x", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "z", "probs")


def require_qkv(trace, prefix: str) -> None:
    """One line for the user when the trace lacks what the steps are made of (a model that gives
    probabilities only, or a layer kept as probabilities only)."""
    absent = [n for n in NEEDS if prefix + n not in trace]
    if absent:
        why = trace.description.missing
        raise InputError(f"the trace has no {', '.join(absent[:4])}{'…' if len(absent) > 4 else ''} for "
                         f"{prefix.rstrip('.')}: the steps need the model's queries, keys and values"
                         + (f" (not captured: {'; '.join(why)})" if why else ""))


def query_heads_sharing(trace, kv_head: int) -> list[int]:
    """The query heads that read key/value head ``kv_head`` (one, or a group under GQA/MQA)."""
    group = trace.description.kv_group
    return list(range(kv_head * group, (kv_head + 1) * group))


def soft_cap(scaled: np.ndarray, cap: float | None) -> np.ndarray:
    """``cap · tanh(scaled / cap)`` where the model soft-caps its scores (Gemma 2), else ``scaled``."""
    return scaled if not cap else cap * np.tanh(scaled / cap)


def bias_row(trace, prefix: str, head: int, query: int) -> np.ndarray | None:
    """Row ``query`` of one head's additive bias (Tk,), without a float64 copy of the whole (·, Tq, Tk)."""
    if prefix + "bias" not in trace:
        return None
    b = trace[prefix + "bias"]
    return np.asarray(b[head if b.shape[0] > 1 else 0, query], dtype=np.float64)


def check_block(trace, part: str, layer: int, head: int | None = None) -> str:
    """Validate the indices against the trace; return the key prefix of the attention block."""
    if part not in PARTS:
        raise InputError(f"part {part!r} must be one of {', '.join(PARTS)}")
    if part == "cross" and not trace.has_cross:
        raise InputError("this model has no cross-attention (only encoder–decoders do): choose part 'self'")
    if part == "enc" and not trace.n_enc_layers:
        raise InputError("this model has no separate encoder (only encoder–decoders do): choose part 'self'")
    n_layers = trace.layers_in(part)
    if not 0 <= layer < n_layers:
        raise InputError(f"layer {layer} is out of range: the {part} attention has {n_layers} layers "
                         f"(0..{n_layers - 1})")
    if head is not None and not 0 <= head < trace.n_heads:
        raise InputError(f"head {head} is out of range: the model has {trace.n_heads} heads (0..{trace.n_heads - 1})")
    return layer_prefix(layer, part)


def kv_input(trace, prefix: str, part: str) -> np.ndarray | None:
    """Input rows of the keys/values: the block input for self-attention. Cross-attention reads the
    encoder output, which a trace holds only when it recorded ``x_kv``; otherwise None."""
    if part != "cross":
        return as_f64(trace, prefix + "x")
    return as_f64(trace, prefix + "x_kv") if prefix + "x_kv" in trace else None


def token_labels(tokens, n: int) -> list[str]:
    """Token labels, or position numbers when the trace does not carry them (e.g. src_tokens)."""
    return [str(t) for t in tokens] if len(tokens) == n else [str(i) for i in range(n)]


def head_slice(trace, prefix: str, name: str, head: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of W_name (D, heads·dh) and b_name belonging to one (query or kv) head."""
    dh = int(trace.description.d_head)
    cols = slice(head * dh, (head + 1) * dh)
    return as_f64(trace, f"{prefix}W_{name}")[:, cols], as_f64(trace, f"{prefix}b_{name}")[cols]


def read_mask_rows(trace, key: str, a: int, b: int) -> np.ndarray:
    """Rows [a, b) of a (Tq, Tk) additive mask as float64; a long input's deferred mask row by row."""
    if key in trace.arrays:
        return np.asarray(trace.arrays[key][a:b], dtype=np.float64)
    return np.stack([np.asarray(trace.row(key, i), dtype=np.float64) for i in range(a, b)])  # (b − a, Tk)
