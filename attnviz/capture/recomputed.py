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
- ``x`` (what the attention reads in a pre-norm block): the block's first norm of the stream entering it (the
  previous layer's ``resid``), with the norm's own weight (``norm_w``, ``norm_b``) and epsilon: RMSNorm
  (``rms_normed``; Gemma's ``1 + w`` as ``offset`` 1) or LayerNorm (``layer_normed``). ``v`` is then a rule over a
  rule (projected from the recomputed ``x``): one level of chaining, never more.

Each rule sits in ``meta["recomputed"][key]`` (kind, ingredient keys, dtype), so a saved trace keeps the rule
and its ingredients and :func:`attach` makes the entries again when it is read. An entry is computed whole
when asked (O(T·d), a few tens of MB at 16,384 tokens), never written into a saved trace.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Recomputed", "attach", "describe", "KINDS", "PARAMS", "POSITION_AXES"]


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


def _rms_normed(stream: np.ndarray, w: np.ndarray, eps: float, offset: float) -> np.ndarray:
    """RMSNorm in float32 as transformers computes it: stream · rsqrt(mean(stream²) + eps) · (offset + w)."""
    s = np.asarray(stream, dtype=np.float32)
    scale = 1.0 / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + np.float32(eps))
    return (s * scale.astype(np.float32)) * (np.float32(offset) + np.asarray(w, dtype=np.float32))


def _layer_normed(stream: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm in float32: (stream − mean) · rsqrt(var + eps) · w + b."""
    s = np.asarray(stream, dtype=np.float32)
    centred = s - s.mean(axis=-1, keepdims=True)
    scale = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + np.float32(eps))
    return centred * scale.astype(np.float32) * np.asarray(w, dtype=np.float32) + np.asarray(b, dtype=np.float32)


# kind → (function, the ingredient roles in argument order)
KINDS = {
    "unrotated": (_unrotated, ("rotated", "cos", "sin")),
    "projected": (_projected, ("x", "w", "b")),
    "mid_stream": (_mid_stream, ("stream", "z", "w", "b")),
    "rms_normed": (_rms_normed, ("stream", "w")),
    "layer_normed": (_layer_normed, ("stream", "w", "b")),
}
# the numbers a kind takes after its arrays (a rule's JSON names each; from a shared file: each checked for range)
PARAMS = {"projected": ("d_head",), "rms_normed": ("eps", "offset"), "layer_normed": ("eps",)}
# where the positions lie in each ingredient (same order): 0 / 1 the axis of positions, None an ingredient without
# one (a weight); a position-wise rule is computed for a few positions from its ingredients cut to them
POSITION_AXES = {"unrotated": (1, 0, 0), "projected": (0, None, None), "mid_stream": (0, 1, None, None),
                 "rms_normed": (0, None), "layer_normed": (0, None, None)}


def _param_ok(name: str, value) -> bool:
    if name == "d_head":
        return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1 << 16
    if name == "eps":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
    return name == "offset" and value in (0, 1, 0.0, 1.0) and not isinstance(value, bool)


def _whole(src):
    """An ingredient as an array: a rule one level down (``v`` from a recomputed ``x``) is computed here."""
    return src.full() if isinstance(src, Recomputed) else src


class Recomputed:
    """One array computed from other arrays by a rule of :data:`KINDS` when it is asked for.

    Parameters
    ----------
    kind : a key of :data:`KINDS`.
    sources : the ingredient arrays, in the kind's order (or a :class:`Recomputed` whose own are arrays).
    shape, dtype : the array's shape and dtype (what the capture would have stored).
    d_head : head width ("projected" only).
    params : the kind's other numbers (:data:`PARAMS`: a norm's ``eps`` and ``offset``).
    """

    recomputed = True  # Trace: computed whole when asked, kept only if small, never written into a file

    def __init__(self, kind: str, sources: list, shape, dtype, d_head: int | None = None, params: dict | None = None):
        self.kind, self.sources = kind, list(sources)
        self.shape, self.dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        self.d_head = d_head
        self.params = dict(params or {})
        if d_head is not None:
            self.params["d_head"] = d_head

    def _numbers(self) -> list:
        return [self.params[n] for n in PARAMS.get(self.kind, ())]

    def full(self) -> np.ndarray:
        fn = KINDS[self.kind][0]
        value = np.ascontiguousarray(fn(*[_whole(s) for s in self.sources], *self._numbers()), dtype=self.dtype)
        if value.shape != self.shape:
            raise ValueError(f"a recomputed array has shape {value.shape}, its rule says {self.shape}")
        return value

    def positions(self, a: int, b: int) -> np.ndarray:
        """Positions [a, b) alone (rows of a (T, D) array, axis 1 of a per-head (H, T, dh)): each ingredient cut
        to them, a rule one level down computed for them alone."""
        cut = []
        for src, axis in zip(self.sources, POSITION_AXES[self.kind]):
            if axis is None:
                cut.append(_whole(src))
            elif isinstance(src, Recomputed):
                cut.append(src.positions(a, b))
            else:
                cut.append(src[a:b] if axis == 0 else src[:, a:b])
        return np.asarray(KINDS[self.kind][0](*cut, *self._numbers()), dtype=self.dtype)

    def row(self, i: int) -> np.ndarray:
        if POSITION_AXES[self.kind][0] == 0:  # a (T, …) array: its row i is position i
            return self.positions(i, i + 1)[0]
        return self.full()[i]


def describe(kind: str, sources: list[str], shape, dtype, d_head: int | None = None, **params) -> dict:
    """The JSON rule of one recomputed entry (``meta["recomputed"][key]``); ``params`` the kind's numbers."""
    if kind not in KINDS or len(sources) != len(KINDS[kind][1]):
        raise ValueError(f"no recomputation {kind!r} from {len(sources)} arrays")
    rule = {"kind": kind, "from": list(sources), "shape": [int(n) for n in shape], "dtype": np.dtype(dtype).name}
    if d_head is not None:
        rule["d_head"] = int(d_head)
    for name in PARAMS.get(kind, ()):
        if name != "d_head":
            rule[name] = float(params[name])
    return rule


def attach(arrays: dict, meta: dict, deferred: dict) -> None:
    """Deferred entries for every rule in ``meta["recomputed"]`` whose ingredients the trace holds (a capture
    just made, or a trace read from a file: its rules come from a shared file, so each is checked for form);
    an array stored under the same key wins. An ingredient may be another rule's entry whose own ingredients are
    all stored (one level: a shared file's chain of rules, or a loop, never recurses deeper)."""
    rules = meta.get("recomputed")
    if not isinstance(rules, dict):
        return
    level0: dict = {}
    for key, rule in rules.items():  # ingredients all stored
        if key not in arrays and key not in deferred and isinstance(rule, dict):
            entry = _entry(rule, arrays, {})
            if entry is not None:
                level0[key] = entry
    level1: dict = {}
    for key, rule in rules.items():  # one level up: ingredients stored or level-0 entries (whose own are stored)
        if key not in arrays and key not in deferred and key not in level0 and isinstance(rule, dict):
            entry = _entry(rule, arrays, level0)
            if entry is not None:
                level1[key] = entry
    deferred.update(level0)
    deferred.update(level1)


def _entry(rule: dict, arrays: dict, level0: dict):
    """The :class:`Recomputed` of one rule whose ingredients are stored (or, with ``level0``, entries made from
    stored ones), or None when its form is wrong or an ingredient is absent."""
    kind, names = rule.get("kind"), rule.get("from")
    if kind not in KINDS or not isinstance(names, list) or len(names) != len(KINDS[kind][1]) \
            or not all(isinstance(n, str) and (n in arrays or n in level0) for n in names):
        return None
    sources = [arrays[n] if n in arrays else level0[n] for n in names]
    try:
        shape = tuple(int(n) for n in rule["shape"])
        dtype = np.dtype(str(rule.get("dtype", "float32")))
    except (KeyError, TypeError, ValueError):
        return None
    params = {n: rule.get(n) for n in PARAMS.get(kind, ())}
    if dtype.kind != "f" or any(n < 0 for n in shape) or not all(_param_ok(n, v) for n, v in params.items()):
        return None
    d_head = params.pop("d_head", None)
    return Recomputed(kind, sources, shape, dtype, d_head, params)
