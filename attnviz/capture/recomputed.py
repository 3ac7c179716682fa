"""Trace arrays recomputed exactly from arrays the trace keeps, instead of stored (Qt-free, NumPy only).

A long capture at full depth writes every array it keeps to disk (:mod:`attnviz.capture.spill`), and the writes
are the capture's cost beyond the model's own forward. Four of a rotary decoder layer's arrays are plain
functions of others it keeps (about 38 % of its bytes), so a long capture keeps the ingredients and a rule:

- ``q_pre_rope`` / ``k_pre_rope``: the rotation undone. Rotary embedding turns each pair of dimensions by an
  angle (``rope_cos``/``rope_sin``, the model's own tables); turning back by the same angle gives what entered
  it, to float32 rounding (cos² + sin² = 1).
- ``v``: ``x W_V + b_V`` split into heads (the capture checked that the model's values are this product).
- ``h`` (the stream in the middle of a pre-norm block): the stream entering the block (``emb.sum`` or the
  previous layer's ``resid``) plus the attention output ``concat(z) W_O + b_O``.

Each rule sits in ``meta["recomputed"][key]`` (kind, ingredient keys, dtype), so a saved trace keeps the rule
and its ingredients and :func:`attach` makes the entries again when it is read. An entry is computed whole
when asked (O(T·d), a few tens of MB at 16,384 tokens), never written into a saved trace.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Recomputed", "attach", "describe", "KINDS"]


def _turn(t: np.ndarray) -> np.ndarray:
    """transformers' ``rotate_half`` on the last axis: [a, b] → [−b, a]."""
    half = t.shape[-1] // 2
    return np.concatenate((-t[..., half:], t[..., :half]), axis=-1)


def _unrotated(rotated: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """What entered the rotary step: r·cos − turn(r)·sin on the first d_rot dimensions (the inverse of
    ``r = t·cos + turn(t)·sin``, a rotation by −angle), the rest unchanged. rotated (H, T, dh); cos, sin (T, d_rot)."""
    d = cos.shape[-1]
    # float32 (each product rounded once: ~1e-7 of the value; float64 temporaries were 300 MB at 16,384 tokens)
    r = np.array(rotated, dtype=np.float32)
    part = r[..., :d]
    part[...] = part * np.asarray(cos, np.float32) - _turn(part) * np.asarray(sin, np.float32)
    return r


def _projected(x: np.ndarray, w: np.ndarray, b: np.ndarray, d_head: int) -> np.ndarray:
    """x W + b split into heads: (T, D) · (D, H·dh) → (T, H·dh) → (H, T, dh)."""
    y = np.dot(np.asarray(x, dtype=np.float32), np.asarray(w, dtype=np.float32)) + np.asarray(b, dtype=np.float32)
    return y.reshape(y.shape[0], -1, d_head).transpose(1, 0, 2)


def _mid_stream(stream: np.ndarray, z: np.ndarray, w_o: np.ndarray, b_o: np.ndarray) -> np.ndarray:
    """stream + concat(z) W_O + b_O: z (H, T, dh) → (T, H·dh); W_O (H·dh, D) → (T, D)."""
    z = np.asarray(z, dtype=np.float32)
    flat = z.transpose(1, 0, 2).reshape(z.shape[1], -1)  # (H, T, dh) → (T, H·dh)
    attn = np.dot(flat, np.asarray(w_o, dtype=np.float32)) + np.asarray(b_o, dtype=np.float32)
    return np.asarray(stream, dtype=np.float32) + attn


# kind → (function, the ingredient roles in argument order)
KINDS = {
    "unrotated": (_unrotated, ("rotated", "cos", "sin")),
    "projected": (_projected, ("x", "w", "b")),
    "mid_stream": (_mid_stream, ("stream", "z", "w", "b")),
}


class Recomputed:
    """One array computed from other arrays by a rule of :data:`KINDS` when it is asked for.

    Parameters
    ----------
    kind : a key of :data:`KINDS`.
    sources : the ingredient arrays, in the kind's order.
    shape, dtype : the array's shape and dtype (what the capture would have stored).
    d_head : head width ("projected" only).
    """

    recomputed = True  # Trace: computed whole when asked, kept only if small, never written into a file

    def __init__(self, kind: str, sources: list, shape, dtype, d_head: int | None = None):
        self.kind, self.sources = kind, list(sources)
        self.shape, self.dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        self.d_head = d_head

    def full(self) -> np.ndarray:
        fn = KINDS[self.kind][0]
        args = self.sources + ([self.d_head] if self.kind == "projected" else [])
        value = np.ascontiguousarray(fn(*args), dtype=self.dtype)
        if value.shape != self.shape:
            raise ValueError(f"a recomputed array has shape {value.shape}, its rule says {self.shape}")
        return value

    def row(self, i: int) -> np.ndarray:
        return self.full()[i]


def describe(kind: str, sources: list[str], shape, dtype, d_head: int | None = None) -> dict:
    """The JSON rule of one recomputed entry (``meta["recomputed"][key]``)."""
    if kind not in KINDS or len(sources) != len(KINDS[kind][1]):
        raise ValueError(f"no recomputation {kind!r} from {len(sources)} arrays")
    rule = {"kind": kind, "from": list(sources), "shape": [int(n) for n in shape], "dtype": np.dtype(dtype).name}
    if d_head is not None:
        rule["d_head"] = int(d_head)
    return rule


def attach(arrays: dict, meta: dict, deferred: dict) -> None:
    """Deferred entries for every rule in ``meta["recomputed"]`` whose ingredients the trace holds (a capture
    just made, or a trace read from a file: its rules come from a shared file, so each is checked for form);
    an array stored under the same key wins."""
    rules = meta.get("recomputed")
    if not isinstance(rules, dict):
        return
    for key, rule in rules.items():
        if key in arrays or key in deferred or not isinstance(rule, dict):
            continue
        kind, names = rule.get("kind"), rule.get("from")
        if kind not in KINDS or not isinstance(names, list) or len(names) != len(KINDS[kind][1]) \
                or not all(isinstance(n, str) and n in arrays for n in names):
            continue
        try:
            shape = tuple(int(n) for n in rule["shape"])
            dtype = np.dtype(str(rule.get("dtype", "float32")))
            d_head = int(rule["d_head"]) if kind == "projected" else None
        except (KeyError, TypeError, ValueError):
            continue
        if dtype.kind != "f" or any(n < 0 for n in shape) or (d_head is not None and d_head <= 0):
            continue
        deferred[key] = Recomputed(kind, [arrays[n] for n in names], shape, dtype, d_head)
