"""Attention probabilities computed on demand from q, k and each row's log-sum-exp (Qt-free, NumPy only).

A probability is p_ij = exp(s_ij − lse_i) with s_ij = cap(q_i·k_j·scale) + mask_ij + bias_ij, where lse_i is
the log-sum-exp of row i's scores (learned sinks included: they only enter the normaliser). So a layer keeps
what is O(T·d) — q after rotation (H, Tq, dh), k as stored (H_kv, Tk, dh), lse (H, Tq) — plus a compact
description of what the model adds to the scores (:class:`ScoreRule`), and any block (heads, rows, cols) is
exact at O(block · dh) cost. Query head h reads key head h // (H / H_kv) (grouped-query attention).

In a trace the ingredients are ordinary arrays (``L{i}.q``, ``L{i}.k``, ``L{i}.lse`` and the rule's own
``L{i}.score_*`` arrays) plus ``meta["on_demand"][prefix]`` (the rule's scalar facts), so a saved trace
rebuilds its deferred ``probs``/``mask`` entries with :func:`attach` and opens everywhere a short one does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.capture.blas_threads import one_blas_thread
from attnviz.capture.file_rows import Rows
from attnviz.capture.t5_buckets import t5_buckets

__all__ = ["ScoreRule", "OnDemandProbs", "OnDemandMask", "attach", "register", "t5_buckets", "ROW_CHUNK_CELLS",
           "ON_DEMAND_T", "row_lse"]

# from this many tokens on, a Hugging Face capture (attention="auto") runs on the fastest kernel and keeps
# q, k and lse: probabilities recomputed when asked, equal to eager within ~1e-7 in float32; shorter inputs
# run the model's own eager attention and keep its probabilities exactly as it computed them
ON_DEMAND_T = 256

# row blocks are computed in pieces of at most this many (head × row × col) cells (float64: 8 bytes each)
ROW_CHUNK_CELLS = 1 << 22
# a causal or windowed block is cut into row chunks of at least this many rows (and about an eighth of its
# columns), so a block across the diagonal skips most of its blocked half
_MIN_ROWS = 32
# ... and of at least this many cells: each chunk costs ~0.3 ms of Python and NumPy calls besides its product,
# so a 256 x 256 tile across the diagonal cut into 8 chunks of 32 rows cost 3.3 ms CPU (a 256 x 256 x 64
# product alone is ~0.4 ms); in 2 chunks of 128 rows it skips a quarter of its cells instead of 7/16
_MIN_CHUNK_CELLS = 1 << 15
# float32's unit round-off: a float32 dot product of length d is off by at most d·_DOT_ERR·|q|·|k|
_DOT_ERR = 2.0 ** -24
# a weight whose float32 dot error bound could move it by more than this is recomputed in float64
_DOT_TOL = 1e-7
_NORM_PIECE = 1024  # key rows whose norms are computed together (bounds an error estimate; read only when used)


@dataclass
class ScoreRule:
    """What one layer adds to q·kᵀ·scale, without any (Tq, Tk) array unless the model's mask has no rule.

    ``causal``: key j ≤ query i (+ ``offset``); ``window``: also i − j < window (transformers' sliding window);
    ``blocked_bits``: an arbitrary mask as np.packbits of a (Tq, Tk) bool "blocked" map (rows packed);
    ``bias``: a stored finite additive bias (1|H, Tq, Tk); ``alibi``: per-head slopes, bias = slope_h · j
    (``alibi_bf16``: as Falcon computes it, bias = bf16(bf16(slope_h) · bf16(j)) · ``alibi_scale``);
    ``rel_table`` (n_buckets, H) with ``rel_rule`` {bidirectional, num_buckets, max_distance}: T5's bias.
    """

    scale: float
    softcap: float | None = None
    causal: bool = False
    window: int | None = None
    offset: int = 0
    blocked_bits: np.ndarray | None = None
    bias: np.ndarray | None = None
    alibi: np.ndarray | None = None
    alibi_bf16: bool = False
    alibi_scale: float = 1.0
    rel_table: np.ndarray | None = None
    rel_rule: dict = field(default_factory=dict)

    ARRAYS = ("blocked_bits", "bias", "alibi", "rel_table")

    def facts(self) -> dict:
        """The scalar part, JSON-safe, for ``meta["on_demand"]``."""
        out = {"scale": float(self.scale), "softcap": self.softcap, "causal": bool(self.causal),
               "window": self.window, "offset": int(self.offset), "rel_rule": dict(self.rel_rule)}
        if self.alibi_bf16:  # only when set: traces written before it read the same
            out.update(alibi_bf16=True, alibi_scale=float(self.alibi_scale))
        return out

    def blocked(self, rows: np.ndarray, cols: np.ndarray, tk: int) -> np.ndarray | None:
        """(r, c) bool: cells the mask blocks (None: nothing blocked)."""
        out = None
        i, j = rows[:, None] + self.offset, cols[None, :]
        if self.causal:
            out = j > i
        if self.window is not None:
            far = (i - j) >= self.window
            out = far if out is None else out | far
        if self.blocked_bits is not None:
            bits = np.unpackbits(self.blocked_bits[rows], axis=1, count=tk)[:, cols].astype(bool)
            out = bits if out is None else out | bits
        return out

    def added(self, heads: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
        """(h|1, r, c) float64 finite bias the model adds to the scores (None: none)."""
        out = None
        if self.bias is not None:
            b = self.bias if self.bias.shape[0] == 1 else self.bias[heads]
            out = b[:, rows][:, :, cols].astype(np.float64)
        if self.alibi is not None and self.alibi_bf16:
            prod = _bf16(_bf16(self.alibi[heads])[:, None, None] * _bf16(cols)[None, None, :])  # (h, 1, c)
            a = prod.astype(np.float64) * float(self.alibi_scale)
            out = a if out is None else out + a
        elif self.alibi is not None:
            a = self.alibi[heads].astype(np.float64)[:, None, None] * cols[None, None, :].astype(np.float64)
            out = a if out is None else out + a
        if self.rel_table is not None:
            rel = cols[None, :] - (rows[:, None] + self.offset)  # key − query, as T5 measures it
            buckets = t5_buckets(rel, bool(self.rel_rule["bidirectional"]), int(self.rel_rule["num_buckets"]),
                                 int(self.rel_rule["max_distance"]))  # (r, c)
            t = self.rel_table.astype(np.float64)[buckets]  # (r, c, H)
            t = t.transpose(2, 0, 1)[heads]  # (h, r, c)
            out = t if out is None else out + t
        return out

    def scores(self, q: np.ndarray, k: np.ndarray, heads, rows, cols, tk: int, with_mask: bool = True) -> np.ndarray:
        """(h, r, c) float64 scores cap(q·kᵀ·scale) + bias (+ −inf where blocked); q (h, r, dh), k (h, c, dh)."""
        dots = np.matmul(q.astype(np.float64), k.astype(np.float64).transpose(0, 2, 1))
        return self.finish(dots, heads, rows, cols, tk, with_mask)

    def finish(self, dots: np.ndarray, heads, rows, cols, tk: int, with_mask: bool = True) -> np.ndarray:
        """(h, r, c) float64 scores from the float64 dot products q·kᵀ (h, r, c): scaled, capped, biased, masked."""
        s = dots * float(self.scale)
        if self.softcap:
            s = self.softcap * np.tanh(s / self.softcap)
        add = self.added(heads, rows, cols)
        if add is not None:
            s = s + add
        if with_mask and self.may_block(rows, cols):
            gone = self.blocked(rows, cols, tk)
            if gone is not None:
                s[np.broadcast_to(gone[None], s.shape)] = -np.inf
        return s

    def may_block(self, rows: np.ndarray, cols: np.ndarray) -> bool:
        """False when no cell of rows × cols can be blocked (so the (r, c) mask need not be built)."""
        if self.blocked_bits is not None or not len(rows) or not len(cols):
            return True
        lo, hi = int(rows.min()) + self.offset, int(rows.max()) + self.offset
        late = self.causal and int(cols.max()) > lo  # some key after some query
        far = self.window is not None and hi - int(cols.min()) >= self.window  # some key outside the window
        return late or far

    def live_cols(self, rows: np.ndarray, cols: np.ndarray) -> tuple[int, int]:
        """[a, b): the part of ascending ``cols`` that some row of ``rows`` may attend to under the causal rule
        and the window (columns outside it are blocked for every row: their weights are 0, never computed)."""
        a, b = 0, len(cols)
        if self.blocked_bits is not None or not len(rows):
            return a, b
        if self.causal:  # key j ≤ query i + offset for the last row
            b = int(np.searchsorted(cols, int(rows.max()) + self.offset, side="right"))
        if self.window is not None:  # i − j < window for the first row
            a = int(np.searchsorted(cols, int(rows.min()) + self.offset - self.window, side="right"))
        return a, max(a, b)


def _bf16(x) -> np.ndarray:
    """``x`` rounded to bfloat16 (nearest, ties to even), as float32: the top 16 bits of the float32 pattern."""
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def _row_norms(x) -> np.ndarray:
    """(..., r) float32 Euclidean norms of the last axis of ``x`` (..., r, dh), rounded up by 1e-6 so they
    bound the norms float64 would give."""
    part = np.asarray(x, np.float32)
    return np.sqrt(np.einsum("...d,...d->...", part, part)) * np.float32(1 + 1e-6)


def _index(sel, n: int) -> np.ndarray:
    """One axis selection (None, int, slice or indices) → an index array within 0..n-1."""
    if sel is None:
        return np.arange(n)
    if isinstance(sel, slice):
        return np.arange(n)[sel]
    if isinstance(sel, (int, np.integer)):
        return np.array([int(sel) % n])
    idx = np.asarray(sel, dtype=np.intp).reshape(-1)
    return np.where(idx < 0, idx + n, idx)


class OnDemandProbs:
    """A deferred ``L{i}.probs``: ``shape``, ``block(heads, rows, cols)``, ``row(i)`` and ``full()``."""

    def __init__(self, q: np.ndarray, k: np.ndarray, lse: np.ndarray, rule: ScoreRule):
        self.q, self.k, self.lse, self.rule = q, k, lse, rule  # (H, Tq, dh), (H_kv, Tk, dh), (H, Tq)
        self._q_rows, self._k_rows = Rows(q), Rows(k)  # a long trace's maps are read from their files
        self.group = q.shape[0] // k.shape[0]
        self.shape = (q.shape[0], q.shape[1], k.shape[1])
        self.dtype = np.dtype(np.float32)
        self._norm_cache: dict[int, np.ndarray] = {}  # key head -> (Tk,) row norms, NaN where not yet read

    def block(self, heads=None, rows=None, cols=None) -> np.ndarray:
        """Exact probabilities of one block, float32 (h, r, c), computed in row chunks.

        Columns every row of a chunk is blocked from (after the last query under the causal rule, before the
        window) are left 0 without computing them. Each chunk runs in float32 (one matrix product per key
        head, shared by the query heads reading it) and the few cells whose float32 error bound could exceed
        ``_DOT_TOL`` are recomputed in float64 (:meth:`_chunk`).
        """
        H, tq, tk = self.shape
        hs, rs, cs = _index(heads, H), _index(rows, tq), _index(cols, tk)
        out = np.zeros((len(hs), len(rs), len(cs)), np.float32)
        if not out.size:
            return out
        ascending = len(cs) < 2 or bool(np.all(np.diff(cs) > 0))
        kv = hs // self.group  # query head h reads key head h // group
        groups = [(int(g), np.flatnonzero(kv == g)) for g in np.unique(kv)]
        step = max(1, ROW_CHUNK_CELLS // max(1, len(hs) * len(cs)))
        if self.rule.causal or self.rule.window is not None:
            step = min(step, max(_MIN_ROWS, len(cs) // 8, _MIN_CHUNK_CELLS // max(1, len(hs) * len(cs))))
        chunks = []  # (first row, rows, [a, b) of the live columns) of each chunk with something to compute
        for r0 in range(0, len(rs), step):
            r = rs[r0:r0 + step]
            a, b = self.rule.live_cols(r, cs) if ascending else (0, len(cs))
            if b > a:  # else every cell of these rows is blocked: weight 0
                chunks.append((r0, r, a, b))
        if chunks:
            with one_blas_thread():  # small products: a second BLAS thread only adds waiting (blas_threads.py)
                for r0, r, a, b in chunks:
                    self._fill(out, hs, r0, r, cs[a:b], a, groups)
        return out

    def _fill(self, out, hs, r0: int, r: np.ndarray, c: np.ndarray, a: int, groups) -> None:
        """Write rows r × columns c (from column index ``a`` of the block) into ``out`` (h, r, c)."""
        run = len(r) and int(r[-1]) - int(r[0]) + 1 == len(r)  # one ascending range of rows: slice, then pick heads
        rows = slice(int(r[0]), int(r[-1]) + 1) if run else None
        lse = np.asarray(self.lse[:, rows][hs] if run else self.lse[hs[:, None], r[None, :]], np.float64)  # (h, r)
        for g, at in groups:
            keys = self._k_rows.rows(g, c)  # (c, dh) of key head g
            q = self._q_rows.block(hs[at], r)  # (h, r, dh)
            top_q = float(_row_norms(q).max())  # from the rows read: q's other rows stay unread
            top_k = float(self._key_norms(g, c).max())
            p = self._chunk(q, keys, hs[at], r, c, lse[at], self.shape[2], top_q * top_k)
            out[at, r0:r0 + len(r), a:a + len(c)] = p

    def _key_norms(self, head: int, cols: np.ndarray) -> np.ndarray:
        """(c,) float32 norms of key head ``head``'s rows ``cols``, rounded up; computed once per piece of
        ``_NORM_PIECE`` rows and only for the pieces ``cols`` touch (a memory-mapped k is never read whole
        for a block that needs a few of its rows)."""
        got = self._norm_cache.get(head)
        if got is None:
            got = self._norm_cache[head] = np.full(self.k.shape[1], np.nan, np.float32)
        if not len(cols):
            return np.zeros(0, np.float32)
        ranged = int(cols[-1]) - int(cols[0]) + 1 == len(cols)
        pieces = range(int(cols[0]) // _NORM_PIECE, int(cols[-1]) // _NORM_PIECE + 1) if ranged else \
            np.unique(np.asarray(cols) // _NORM_PIECE)
        for p in pieces:
            a = int(p) * _NORM_PIECE
            if np.isnan(got[a]):
                piece = self._k_rows.rows(head, np.arange(a, min(a + _NORM_PIECE, len(got))))  # (piece, dh)
                got[a:a + _NORM_PIECE] = _row_norms(piece)
        return got[int(cols[0]):int(cols[-1]) + 1] if ranged else got[cols]

    def _chunk(self, q: np.ndarray, keys: np.ndarray, hs, r, c, lse: np.ndarray, tk: int,
               qk_top: float) -> np.ndarray:
        """(h, r, c) float32 probabilities of heads ``hs`` (all reading one key head) over rows r × columns c;
        ``qk_top`` bounds |q_i|·|k_j| over the chunk.

        Computed in float32; each float32 step is off by at most a unit round-off of the magnitudes it
        handles, so |Δs| ≤ ``err`` for every cell (the dot product's dh·u·|q|·|k| plus 8 round-offs of the
        largest score, bias and normaliser) and |Δp| ≤ p·err. The cells where that could exceed ``_DOT_TOL``
        (only large weights) are recomputed in float64; if they are many, the whole chunk is.
        """
        h, n, dh = q.shape
        q32, k32 = np.asarray(q, np.float32), np.asarray(keys, np.float32)
        rule, sc = self.rule, float(self.rule.scale)
        s = (q32.reshape(h * n, dh) @ k32.T).reshape(h, n, len(c))  # (h, r, c) float32 dot products
        add = rule.added(hs, r, c)  # (h|1, r, c) float64 or None
        fin = np.isfinite(lse)
        span = qk_top * abs(sc)  # |q·k·scale| ≤ |q|·|k|·|scale| (Cauchy–Schwarz)
        top_s = min(span, abs(rule.softcap)) if rule.softcap else span
        err = 1.01 * _DOT_ERR * (dh * span + 8 * (top_s + (float(np.abs(add).max()) if add is not None else 0.0)
                                                  + (float(np.abs(lse[fin]).max()) if fin.any() else 0.0)))
        s *= np.float32(sc)
        if rule.softcap:
            s /= np.float32(rule.softcap)
            np.tanh(s, out=s)
            s *= np.float32(rule.softcap)
        if add is not None:
            s += add.astype(np.float32)
        if rule.may_block(r, c):
            gone = rule.blocked(r, c, tk)
            if gone is not None:
                s[np.broadcast_to(gone[None], s.shape)] = -np.inf
        s -= lse.astype(np.float32)[:, :, None]
        with np.errstate(invalid="ignore", over="ignore"):
            p = np.exp(s, out=s)
        if not fin.all():
            p[~fin] = 0.0  # a row with nothing to attend: zeros
        if float(p.max()) * 1.001 * err <= _DOT_TOL:
            return p  # no cell float32 could have moved by more than _DOT_TOL
        fix = p * np.float32(1.001 * err) > _DOT_TOL  # the cells that could have
        hi, ri, ci = np.unravel_index(np.flatnonzero(fix), fix.shape)  # (np.nonzero of a 3-D mask is ~10× slower)
        if len(hi) > p.size // 4:  # many large weights: the whole chunk in float64
            exact = rule.finish(np.matmul(q32.astype(np.float64), k32.astype(np.float64).T), hs, r, c, tk)
            with np.errstate(invalid="ignore", over="ignore"):
                p = np.exp(exact - lse[:, :, None]).astype(np.float32)
            p[~fin] = 0.0
        elif len(hi):
            x = np.einsum("nd,nd->n", q32[hi, ri].astype(np.float64), k32[ci].astype(np.float64)) * sc
            if rule.softcap:
                x = rule.softcap * np.tanh(x / rule.softcap)
            if add is not None:
                x = x + np.broadcast_to(add, p.shape)[hi, ri, ci]  # add may be (1, r, c) or (h, 1, c)
            p[hi, ri, ci] = np.exp(x - lse[hi, ri])
        return p

    def row(self, i: int) -> np.ndarray:
        return self.block(rows=int(i))[:, 0]  # (H, Tk)

    def full(self) -> np.ndarray:
        return self.block()


def row_lse(q: np.ndarray, k: np.ndarray, rule: ScoreRule) -> np.ndarray:
    """(H, Tq) float64 log-sum-exp of every row's scores under ``rule`` (row chunks, never T×T at once): for a
    kernel that gives none (families computing attention in their own code). q (H, Tq, dh), k (H_kv, Tk, dh).
    Kept in float64: a float32 lse of an ALiBi row (lse ≈ 24 at 276 tokens) would round p by ~1e-6."""
    H, tq, tk = q.shape[0], q.shape[1], k.shape[1]
    group = H // k.shape[0]
    heads, cols = np.arange(H), np.arange(tk)
    kk = k[heads // group]  # (H, Tk, dh): query head h reads key head h // group
    out = np.empty((H, tq), np.float64)
    step = max(1, ROW_CHUNK_CELLS // max(1, H * tk))
    for r0 in range(0, tq, step):
        rows = np.arange(r0, min(tq, r0 + step))
        s = rule.scores(q[:, rows], kk, heads, rows, cols, tk)  # (H, r, Tk)
        top = s.max(axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)  # a row with nothing to attend: its lse stays −inf
        with np.errstate(divide="ignore"):
            out[:, rows] = np.log(np.exp(s - top).sum(-1)) + top[..., 0]
    return out


class OnDemandMask:
    """A deferred ``L{i}.mask``: the (Tq, Tk) additive 0 / −inf map of a :class:`ScoreRule`, built when asked."""

    def __init__(self, rule: ScoreRule, tq: int, tk: int):
        self.rule, self.shape = rule, (tq, tk)

    def block(self, rows=None, cols=None) -> np.ndarray:
        rs, cs = _index(rows, self.shape[0]), _index(cols, self.shape[1])
        gone = self.rule.blocked(rs, cs, self.shape[1])
        out = np.zeros((len(rs), len(cs)), np.float32)
        if gone is not None:  # in place: np.where(...).astype made a float64 copy (2 GB at 2,048 × 131,072) too
            out[gone] = -np.inf
        return out

    def row(self, i: int) -> np.ndarray:
        return self.block(rows=int(i))[0]

    def full(self) -> np.ndarray:
        return self.block()


def register(arrays: dict, meta: dict, prefix: str, lse: np.ndarray, rule: ScoreRule) -> None:
    """Put one layer's on-demand ingredients into a trace's arrays and meta (the form :func:`attach` reads)."""
    arrays[prefix + "lse"] = lse
    for name in ScoreRule.ARRAYS:
        value = getattr(rule, name)
        if value is not None:
            arrays[f"{prefix}score_{name}"] = value
    meta.setdefault("on_demand", {})[prefix] = rule.facts()


def attach(arrays: dict, meta: dict, deferred: dict) -> None:
    """Deferred ``probs`` and ``mask`` entries for every layer ``meta["on_demand"]`` describes (a capture just
    made, or a trace read from a file); a layer whose full probabilities are stored keeps them."""
    for prefix, facts in (meta.get("on_demand") or {}).items():
        need = [prefix + n for n in ("q", "k", "lse")]
        if not all(n in arrays for n in need):
            continue
        rule = ScoreRule(scale=float(facts["scale"]), softcap=facts.get("softcap"), causal=bool(facts.get("causal")),
                         window=facts.get("window"), offset=int(facts.get("offset") or 0),
                         alibi_bf16=bool(facts.get("alibi_bf16")), alibi_scale=float(facts.get("alibi_scale") or 1.0),
                         rel_rule=dict(facts.get("rel_rule") or {}),
                         **{n: arrays.get(f"{prefix}score_{n}") for n in ScoreRule.ARRAYS})
        probs = OnDemandProbs(arrays[prefix + "q"], arrays[prefix + "k"], arrays[prefix + "lse"], rule)
        if prefix + "probs" not in arrays:
            deferred[prefix + "probs"] = probs
        if prefix + "mask" not in arrays:
            deferred[prefix + "mask"] = OnDemandMask(rule, *probs.shape[1:])
