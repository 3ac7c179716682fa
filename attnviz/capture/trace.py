"""The Trace: everything one forward pass computed, as plain numpy plus metadata.

The array names and the meta's fields (a public contract) are documented in one place,
:mod:`attnviz.capture.description`; ``trace.description`` is the meta read as a typed, checked dataclass.

Long inputs (issue 34): a layer captured on demand keeps no (H, T, T) map. ``L{i}.lse`` (H, Tq) is each row's
log-sum-exp, ``L{i}.score_*`` the arrays of its score rule (packed mask bits, a stored bias, ALiBi slopes, T5's
bucket table) and ``meta["on_demand"][prefix]`` its scalar facts (scale, soft-cap, causal, window); ``probs`` and
``mask`` are then deferred entries (:mod:`attnviz.capture.on_demand`) that :meth:`Trace.probs` reads block by
block, exactly. A saved trace stores these ingredients and :meth:`Trace.load` attaches the deferred entries again.
Such a layer also keeps ``q_pre_rope``, ``k_pre_rope``, ``v`` and ``h`` as rules over arrays it keeps
(``meta["recomputed"]``, :mod:`attnviz.capture.recomputed`): computed when read, equal to the stored arrays
to float32 rounding, never written into a file.

Storage: an array may be a read-only memory map of a file in the trace's temporary folder
(:mod:`attnviz.capture.spill`: a long capture at full depth keeps its layers on disk beyond a memory budget,
and :meth:`Trace.load` maps a saved trace's large members the same way). Readers do not care; :meth:`Trace.save`
streams such arrays into the file one at a time, and :meth:`Trace.close` (or garbage collection) removes the
folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from attnviz.capture.compute_dtype import probs_dtype
from attnviz.capture.description import TraceDescription
from attnviz.capture.on_demand import attach as attach_on_demand
from attnviz.capture.recomputed import attach as attach_recomputed
from attnviz.capture.spill import SpillStore
from attnviz.capture.trace_file import read_trace_file, write_trace_file
from attnviz.errors import InputError

__all__ = ["Trace", "layer_prefix", "LARGE_T"]

# Above this many tokens a trace keeps float16 arrays and recomputes logits from q·kᵀ on demand (and its
# file leaves them out); at or below it a saved trace holds every layer's logits and out.
LARGE_T = 512
# a whole on-demand map asked for as a whole is kept (not recomputed on the next ask) up to this many cells
KEEP_WHOLE_CELLS = 1 << 22


def _pick(sel, n: int, axis: str):
    """An index for one axis of ``n`` positions of a block: None (all), an int kept as an axis of one, a slice
    (clipped like NumPy's) or an index array; negative indices count from the end. Anything else, or an index
    outside the axis, is an InputError naming the axis (an int past the end once gave an empty block, and a
    column past the end of a long trace a column of zeros)."""
    if sel is None:
        return None
    if isinstance(sel, slice):
        start, stop, step = sel.indices(n)
        return slice(start, stop) if step == 1 else np.arange(start, stop, step, dtype=np.intp)
    if isinstance(sel, (bool, np.bool_)):
        raise InputError(f"{axis} takes an index, a slice or a list of indices, not {sel!r}")
    if isinstance(sel, (int, np.integer)):
        i = int(sel)
        if not -n <= i < n:
            raise InputError(f"{axis}={i} is out of range: there are {n:,} ({_span(n)})")
        i %= n
        return slice(i, i + 1)
    try:
        arr = np.asarray(sel)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{axis} takes an index, a slice or a list of indices: {exc}") from None
    if arr.size == 0:
        return np.zeros(0, np.intp)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        got = repr(sel) if arr.ndim == 0 else f"a list of {_kind_words(arr)}" if arr.ndim == 1 else \
            f"a {arr.ndim}-dimensional array"
        raise InputError(f"{axis} takes an index, a slice or a list of whole-number indices, not {got}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < -n or hi >= n:
        raise InputError(f"{axis} holds {hi if hi >= n else lo}, out of range: there are {n:,} ({_span(n)})")
    return np.where(arr < 0, arr + n, arr).astype(np.intp, copy=False)


def _kind_words(arr: np.ndarray) -> str:
    """"text", "fractions" …: what a list held, in a user's words rather than NumPy's ("str32")."""
    return {"U": "text", "S": "text", "f": "fractions", "c": "complex numbers", "b": "true/false values",
            "O": "mixed values"}.get(arr.dtype.kind, arr.dtype.name)


def _span(n: int) -> str:
    return f"indices 0–{n - 1:,} or −{n:,}–−1" if n else "none"


def layer_prefix(layer: int, part: str = "self") -> str:
    """Key prefix of one attention block: part is "self", "cross" or "enc" (encoder of enc–dec)."""
    if part == "cross":
        return f"L{layer}.cross."
    if part == "enc":
        return f"enc.L{layer}."
    return f"L{layer}."


@dataclass
class Trace:
    """Tokens, metadata and named arrays of one captured forward pass (batch of one)."""

    tokens: list[str]
    meta: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    # arrays computed when first asked for (issue 18: a Hugging Face MLM head's (T, V) prediction cost
    # ~100 ms a keystroke while the panel shows one row): key → object with ``shape``, ``full()`` (the
    # whole array, then kept in ``arrays``) and ``row(i)`` (one row of it, computed alone)
    deferred: dict = field(default_factory=dict, repr=False, compare=False)
    # the temporary folder of arrays kept on disk as read-only memory maps (attnviz.capture.spill), or None
    spill: SpillStore | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        # arrays a long capture keeps as a rule over others (attnviz.capture.recomputed): made again wherever a
        # trace is built from its arrays and meta (a capture, Trace.load, a copy)
        attach_recomputed(self.arrays, self.meta, self.deferred)

    # -- access --------------------------------------------------------------------------------
    # Long inputs do not keep what is cheap to recompute (memory): logits = q·kᵀ·scale and
    # out = concat(z)·W_O + b_O are rebuilt here on demand from the arrays that are kept.
    _DERIVED = {"logits": "q", "out": "z"}

    def __contains__(self, key: str) -> bool:
        if key in self.arrays or key in self.deferred:
            return True
        stem, _, leaf = key.rpartition(".")
        if leaf == "out" and f"{stem}.W_o" not in self.arrays:
            return False
        return leaf in self._DERIVED and f"{stem}.{self._DERIVED[leaf]}" in self.arrays

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self.arrays:
            return self.arrays[key]
        pending = self.deferred.get(key)
        if _recomputed(pending):  # recomputed from what is kept (long inputs: kept only if small)
            value = pending.full()
            if hasattr(pending, "block"):  # probabilities: in the model's precision, as probs() gives them
                value = value.astype(self.probs_dtype, copy=False)
            if value.size <= KEEP_WHOLE_CELLS:
                self.arrays.setdefault(key, value)
            return self.arrays.get(key, value)
        if pending is not None:
            value = self.arrays.setdefault(key, pending.full())  # another thread may have been first
            self.deferred.pop(key, None)
            return value
        stem, _, leaf = key.rpartition(".")
        if leaf == "logits" and f"{stem}.q" in self.arrays:
            return self._logits_from_qk(stem + ".")
        if leaf == "out" and f"{stem}.z" in self.arrays and f"{stem}.W_o" in self.arrays:
            return self._out_from_z(stem + ".")
        raise KeyError(f"trace has no array {key!r}")

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def keys(self) -> list[str]:
        return list(self.arrays) + [k for k in list(self.deferred) if k not in self.arrays]

    def shape(self, key: str) -> tuple[int, ...]:
        """Shape of array ``key`` without computing it if it is deferred."""
        pending = self.deferred.get(key)
        if pending is not None and key not in self.arrays:
            return tuple(pending.shape)
        return tuple(self[key].shape)

    def row(self, key: str, i: int) -> np.ndarray:
        """Row ``i`` of array ``key``; a deferred array computes that row alone (the whole array is
        computed only when it is asked for as a whole)."""
        pending = self.deferred.get(key)
        if pending is not None and key not in self.arrays:
            return pending.row(i)
        return self[key][i]

    def _layer_fact(self, key: str, prefix: str):
        """A meta fact given once, or per layer as a list (Hugging Face models: scale, soft-cap)."""
        value = self.meta.get(key)
        if isinstance(value, list):
            stem = prefix[1:].split(".")[0] if prefix.startswith("L") else ""
            return value[int(stem)] if stem.isdigit() and int(stem) < len(value) else value[0]
        return value

    def attention_scale(self, prefix: str = "L0.") -> float:
        """The factor on q·kᵀ of the block at ``prefix`` (per layer when ``meta["layer_scales"]`` says so)."""
        scales = self.meta.get("layer_scales")
        return float(self._layer_fact("layer_scales", prefix) if scales else self.meta["scale"])

    def softcap(self, prefix: str = "L0.") -> float | None:
        """Gemma 2's soft-cap c of the block at ``prefix``: logits = c·tanh(q·kᵀ·scale / c); None without."""
        cap = self._layer_fact("softcap", prefix)
        return float(cap) if cap else None

    def _logits_from_qk(self, prefix: str) -> np.ndarray:
        q = self.arrays[prefix + "q"].astype(np.float32)  # (H, Tq, dh)
        k = self.arrays[prefix + "k"].astype(np.float32)  # (H_kv, Tk, dh)
        k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)  # (H, Tk, dh)
        logits = (q @ k.transpose(0, 2, 1)) * np.float32(self.attention_scale(prefix))
        cap = self.softcap(prefix)
        return logits if cap is None else np.float32(cap) * np.tanh(logits / np.float32(cap))

    def _out_from_z(self, prefix: str) -> np.ndarray:
        z = self.arrays[prefix + "z"].astype(np.float32)  # (H, T, dh)
        if prefix + "head_gate" in self.arrays:  # heads ablated by the what-if lab
            z = z * self.arrays[prefix + "head_gate"].astype(np.float32)[:, None, None]
        merged = z.transpose(1, 0, 2).reshape(z.shape[1], -1)  # (T, H*dh), heads concatenated
        return merged @ self.arrays[prefix + "W_o"].astype(np.float32) + self.arrays[prefix + "b_o"].astype(np.float32)

    # -- shape facts -------------------------------------------------------------------------
    @property
    def description(self) -> TraceDescription:
        """``meta`` read as the typed description (:mod:`attnviz.capture.description`), checked on each read:
        code and tools may have changed ``meta`` since the trace was made."""
        return TraceDescription.from_meta(self.meta)

    @property
    def kind(self) -> str:
        return self.meta.get("kind", "encoder")

    @property
    def n_layers(self) -> int:
        return int(self.meta["n_layers"])

    @property
    def n_enc_layers(self) -> int:
        return int(self.meta.get("n_enc_layers", 0))

    @property
    def n_heads(self) -> int:
        return int(self.meta["n_heads"])

    @property
    def n_kv_heads(self) -> int:
        return int(self.meta.get("n_kv_heads", self.n_heads))

    @property
    def has_cross(self) -> bool:
        return "L0.cross.probs" in self.arrays or "L0.cross.probs" in self.deferred

    @property
    def src_tokens(self) -> list[str]:
        return [str(t) for t in self.arrays.get("src_tokens", [])]

    @property
    def grid(self) -> tuple[int, int] | None:
        g = self.meta.get("grid")
        return tuple(g) if g else None

    @property
    def parts(self) -> tuple[str, ...]:
        """The attention parts this trace holds: ("self",), or ("enc", "cross", "self") for encoder–decoders."""
        if self.n_enc_layers:
            return ("enc", "cross", "self") if self.has_cross else ("enc", "self")
        return ("self",)

    def layers_in(self, part: str = "self") -> int:
        """Number of layers of one part: the encoder's for "enc", the decoder's (or only) stack otherwise."""
        return self.n_enc_layers if part == "enc" else self.n_layers

    def selection_error(self, part: str = "self", layer: int = 0, head: int = 0, query: int | None = None) -> str | None:
        """Why (part, layer, head, query) does not exist in this trace, as a sentence for the user; None if it does."""
        if part not in ("self", "cross", "enc"):
            return f"unknown part {part!r}: choose self, cross or enc"
        if part == "cross" and not self.has_cross:
            return "this model has no cross-attention (part 'cross' needs an encoder–decoder)"
        if part == "enc" and not self.n_enc_layers:
            return "this model has no separate encoder (part 'enc' needs an encoder–decoder)"
        n_layers = self.layers_in(part)
        if not 0 <= layer < n_layers:
            return f"layer {layer} does not exist: the model has layers 0..{n_layers - 1}"
        if not 0 <= head < self.n_heads:
            return f"head {head} does not exist: the model has heads 0..{self.n_heads - 1}"
        n_q = len(self.query_tokens(part))
        if query is not None and not 0 <= query < n_q:
            return f"query {query} does not exist: the input has positions 0..{n_q - 1}"
        return None

    def check_selection(self, part: str = "self", layer: int = 0, head: int = 0, query: int | None = None) -> None:
        """Raise InputError (one line for the user) unless the selection exists in this trace."""
        problem = self.selection_error(part, layer, head, query)
        if problem:
            raise InputError(problem)

    # -- attention blocks -----------------------------------------------------------------------
    # The one way every consumer reads attention: a block (heads, rows, cols) of one layer's probabilities.
    # A short trace slices its stored (H, Tq, Tk) array; a long one may recompute the block from q, k, the
    # model's additive terms and each row's log-sum-exp, so callers ask for what they draw, never T×T.
    def probs_shape(self, layer: int, part: str = "self") -> tuple[int, int, int]:
        """(H, Tq, Tk) of one layer's probabilities, without computing them."""
        return tuple(int(n) for n in self.shape(layer_prefix(layer, part) + "probs"))

    def probs(self, layer: int, part: str = "self", heads=None, rows=None, cols=None) -> np.ndarray:
        """Attention probabilities of one layer, shaped (heads, rows, cols), in the model's precision.

        ``heads``, ``rows`` and ``cols`` each take None (all), an int (kept as an axis of length 1), a
        slice or a sequence of indices; the whole (H, Tq, Tk) is built only when all three are None.
        The dtype is :attr:`probs_dtype`: float16 for a model that computed in float16, else float32
        (the rule: :mod:`attnviz.capture.compute_dtype`).
        """
        key = layer_prefix(layer, part) + "probs"
        shape = self.probs_shape(layer, part)
        picks = tuple(_pick(sel, n, axis) for sel, n, axis in zip((heads, rows, cols), shape,
                                                                 ("heads", "rows (queries)", "cols (keys)")))
        pending = self.deferred.get(key)
        dtype = self.probs_dtype
        if key not in self.arrays and pending is not None and hasattr(pending, "block"):
            # exact, from q, k and each row's log-sum-exp (float32): never the whole T×T; rounded once
            return pending.block(*picks).astype(dtype, copy=False)
        if all(p is None for p in picks):
            return np.asarray(self[key], dtype=dtype)
        block = self[key]
        for axis, p in enumerate(picks):
            if p is not None:
                block = block[(slice(None),) * axis + (p,)]
        return np.asarray(block, dtype=dtype)

    @property
    def probs_dtype(self) -> np.dtype:
        """The dtype of :meth:`probs` blocks: the precision the model computed in (float16 or float32; a
        bfloat16 model's are float32, NumPy having no bfloat16)."""
        return probs_dtype(self.meta.get("compute_dtype"))

    def pooled_probs(self, layer: int, part: str = "self", head: int = 0, max_rows: int = 1024,
                     max_cols: int = 1024, chunk_rows: int = 256) -> tuple[np.ndarray, int, int]:
        """Max-pooled overview of one head's map: (map, row_step, col_step).

        Each cell is the maximum over a row_step × col_step block, so a single large weight (a column of
        1.0) stays visible at every size; streamed over ``chunk_rows`` query rows at a time.
        """
        _, tq, tk = self.probs_shape(layer, part)
        rs, cs = max(1, -(-tq // max_rows)), max(1, -(-tk // max_cols))
        out = np.zeros((-(-tq // rs), -(-tk // cs)), np.float32)
        step = max(rs, (chunk_rows // rs) * rs)
        for r0 in range(0, tq, step):
            block = self.probs(layer, part, heads=head, rows=slice(r0, min(tq, r0 + step)))[0]  # (r, Tk)
            r, c = block.shape
            pad = np.zeros((-(-r // rs) * rs, -(-c // cs) * cs), np.float32)
            pad[:r, :c] = block
            pooled = pad.reshape(pad.shape[0] // rs, rs, pad.shape[1] // cs, cs).max(axis=(1, 3))
            out[r0 // rs: r0 // rs + pooled.shape[0]] = pooled
        return out, rs, cs

    def all_probs(self, part: str = "self") -> list[np.ndarray]:
        return [self.probs(i, part) for i in range(self.layers_in(part))]

    def key_tokens(self, part: str = "self") -> list[str]:
        """Labels of the keys (columns) of a block: source tokens for cross-attention."""
        if part in ("cross", "enc"):
            return self.src_tokens
        return list(self.tokens)

    def query_tokens(self, part: str = "self") -> list[str]:
        return self.src_tokens if part == "enc" else list(self.tokens)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays computed so far (deferred ones count once computed)."""
        return sum(a.nbytes for a in {id(a): a for a in self.arrays.values()}.values())

    # -- files -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Remove the temporary folder of arrays kept on disk now (else it goes with the trace's garbage
        collection); arrays already read stay readable on POSIX systems."""
        if self.spill is not None:
            self.spill.close()

    def save(self, path: str | os.PathLike) -> None:
        """Write an .npz (atomically: a temporary name renamed into place; :mod:`attnviz.capture.trace_file`)."""
        write_trace_file(path, self._file_arrays(), self.tokens, self.meta)

    def _file_arrays(self) -> dict:
        """The arrays a saved trace holds (besides tokens and meta)."""
        # deferred arrays are computed for the file, except those recomputed from what is kept (probabilities
        # from q, k and lse; attnviz.capture.recomputed): their ingredients and rules are in the file already and
        # Trace.load attaches them again
        # the scores (q·kᵀ·scale, (H, T, T)) are never written, nor an attention output the trace did not keep:
        # Trace recomputes them from q, k (z, W_O) after Trace.load; a file saved before with scores still opens,
        # and saved again it drops them
        return {key: self[key] for key in self.keys()
                if (key in self.arrays or not _recomputed(self.deferred.get(key))) and not self._derivable_scores(key)}

    def _derivable_scores(self, key: str) -> bool:
        stem, _, leaf = key.rpartition(".")
        return leaf == "logits" and f"{stem}.q" in self.arrays and f"{stem}.k" in self.arrays

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Trace":
        """A saved trace (its facts checked: a shared file); a long one's large members mapped from disk."""
        tokens, meta, arrays, store = read_trace_file(path)
        deferred: dict = {}
        attach_on_demand(arrays, meta, deferred)  # a long trace's probabilities, recomputed from q and k
        return cls(tokens=tokens, meta=meta, arrays=arrays, deferred=deferred, spill=store)


def _recomputed(pending) -> bool:
    """A deferred entry computed again from kept arrays whenever asked (probabilities from q and k, or a rule of
    attnviz.capture.recomputed), as opposed to one computed once and then kept (a prediction, the rollout)."""
    return pending is not None and (hasattr(pending, "block") or bool(getattr(pending, "recomputed", False)))
