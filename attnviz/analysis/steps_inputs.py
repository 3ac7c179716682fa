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
           "kv_key", "token_labels", "head_slice", "read_mask_rows", "mask_blocks", "position_rows", "project_rows",
           "out_rows", "PROJECT_ROWS"]

PARTS = ("self", "cross", "enc")
# positions projected at a time (x W + b over every key): (PROJECT_ROWS, D) float64 of x at once, never the
# whole (T, D) (at 8,190 tokens and d 576 one float64 copy of x is 38 MB, and the matrix form made two)
PROJECT_ROWS = 1024


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


def position_rows(trace, key: str, a: int, b: int) -> np.ndarray:
    """Positions [a, b) of array ``key`` as float64: rows of a (T, D) array, axis 1 of a per-head (H, T, dh).

    A stored or memory-mapped array is sliced (only those pages are read). An array a long trace keeps as a
    rule (``x``, ``h``, ``v``, q/k before the rotation: :mod:`attnviz.capture.recomputed`) is computed for these
    positions alone with the rule's own function, from its ingredients cut to them: the matrix form of a
    128-position window never builds the whole (T, D) stream (and its float32 temporaries) to show 128 rows.
    """
    pending = trace.deferred.get(key) if key not in trace.arrays else None
    if hasattr(pending, "positions"):
        return np.asarray(pending.positions(a, b), dtype=np.float64)
    from attnviz.capture.file_rows import positions

    return np.asarray(positions(trace[key], a, b), dtype=np.float64)  # a long trace's map: read from its file


def project_rows(trace, key: str, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``trace[key] W + b`` (T, n) in float64 for every position of the (T, D) input ``key``, computed
    PROJECT_ROWS positions at a time: the keys and values of every position (T × d_head per head) without a
    float64 copy of the whole input (T × d_model)."""
    n = trace.shape(key)[0]
    out = np.empty((n, W.shape[1]))
    for r0 in range(0, n, PROJECT_ROWS):
        out[r0:r0 + PROJECT_ROWS] = position_rows(trace, key, r0, min(n, r0 + PROJECT_ROWS)) @ W + b
    return out


def out_rows(trace, prefix: str, a: int, b: int) -> np.ndarray:
    """Rows [a, b) of the attention output the model produced (``out``, (T, D)) as float64.

    A long trace keeps z, not out, and :class:`~attnviz.capture.trace.Trace` derives out = concat(z) W_O + b_O
    for every position when asked; here the same product (in float32, with the what-if lab's head gate, as
    the trace computes it) for the rows asked alone."""
    key = prefix + "out"
    arrays = trace.arrays
    if key in arrays or key in trace.deferred or not all(prefix + n in arrays for n in ("z", "W_o", "b_o")):
        return np.asarray(trace[key][a:b], dtype=np.float64)
    z = np.asarray(arrays[prefix + "z"][:, a:b], dtype=np.float32)  # (H, b − a, dh)
    if prefix + "head_gate" in arrays:  # heads ablated by the what-if lab
        z = z * arrays[prefix + "head_gate"].astype(np.float32)[:, None, None]
    merged = z.transpose(1, 0, 2).reshape(z.shape[1], -1)  # (b − a, H·dh), heads concatenated
    out = merged @ arrays[prefix + "W_o"].astype(np.float32) + arrays[prefix + "b_o"].astype(np.float32)
    return out.astype(np.float64)


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


def kv_key(trace, prefix: str, part: str) -> str | None:
    """The key of the keys'/values' input rows: the block input for self-attention. Cross-attention reads
    the encoder output, which a trace holds only when it recorded ``x_kv``; otherwise None."""
    if part != "cross":
        return prefix + "x"
    return prefix + "x_kv" if prefix + "x_kv" in trace else None


def token_labels(tokens, n: int) -> list[str]:
    """Token labels, or position numbers when the trace does not carry them (e.g. src_tokens)."""
    return [str(t) for t in tokens] if len(tokens) == n else [str(i) for i in range(n)]


def head_slice(trace, prefix: str, name: str, head: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of W_name (D, heads·dh) and b_name belonging to one (query or kv) head."""
    dh = int(trace.description.d_head)
    cols = slice(head * dh, (head + 1) * dh)
    return as_f64(trace, f"{prefix}W_{name}")[:, cols], as_f64(trace, f"{prefix}b_{name}")[cols]


def mask_blocks(trace, key: str, a: int, b: int):
    """A function (c0, c1) → rows [a, b) × keys [c0, c1) of a (Tq, Tk) additive mask, float64: a stored mask
    sliced, a long input's deferred mask asked for that block alone (its ``block(rows, cols)``), else its
    rows read once (:func:`read_mask_rows`) and sliced."""
    pending = trace.deferred.get(key) if key not in trace.arrays else None
    if pending is not None and hasattr(pending, "block"):
        return lambda c0, c1: np.asarray(pending.block(rows=slice(a, b), cols=slice(c0, c1)), dtype=np.float64)
    rows = read_mask_rows(trace, key, a, b)  # (b − a, Tk)
    return lambda c0, c1: rows[:, c0:c1]


def read_mask_rows(trace, key: str, a: int, b: int) -> np.ndarray:
    """Rows [a, b) of a (Tq, Tk) additive mask as float64; a long input's deferred mask row by row."""
    if key in trace.arrays:
        return np.asarray(trace.arrays[key][a:b], dtype=np.float64)
    return np.stack([np.asarray(trace.row(key, i), dtype=np.float64) for i in range(a, b)])  # (b − a, Tk)
