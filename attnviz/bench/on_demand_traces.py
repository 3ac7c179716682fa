"""Long traces whose probabilities exist only as blocks: exp(s − lse) from random q and k, never T×T.

For the views' benchmarks and tests at 16,384 tokens without a model: :func:`on_demand_trace` builds a
Trace whose ``L{i}.probs`` is a deferred block provider (``shape``, ``block(heads, rows, cols)``,
``row(i)``, ``full()``). ``full()`` raises unless allowed: a consumer that asks for the whole map fails
loudly instead of quietly allocating gigabytes. :class:`BlockTrace` routes ``Trace.probs`` to the
provider's ``block`` — what the capture's own on-demand trace does — so this works on any Trace version.
"""

from __future__ import annotations

import threading

import numpy as np

from attnviz.capture.trace import Trace

__all__ = ["BlockProbs", "BlockTrace", "on_demand_trace", "capture_format_trace", "WholeMapAsked"]


class WholeMapAsked(AssertionError):
    """A consumer asked a long on-demand map for its whole (H, T, T)."""


class BlockProbs:
    """Causal softmax(q·kᵀ·scale) of one layer, computed per block as exp(s − lse); lse per head on first use."""

    def __init__(self, q: np.ndarray, k: np.ndarray, scale: float, allow_full: bool = False):
        self.q = q.astype(np.float32)  # (H, T, d)
        self.k = k.astype(np.float32)  # (H_kv, T, d)
        self.scale = np.float32(scale)
        self.shape = (q.shape[0], q.shape[1], k.shape[1])
        self.allow_full = allow_full
        self._lse: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()
        self.cells = 0  # cells computed so far (tests: what a view asked for)

    def _scores(self, h: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        group = self.shape[0] // self.k.shape[0]  # query heads sharing one key head
        s = (self.q[h, rows] @ self.k[h // group, cols].T) * self.scale  # (r, c)
        if cols.size and rows.size and cols.max() > rows.min():  # some key later than some query
            np.putmask(s, cols[None, :] > rows[:, None], np.float32(-np.inf))  # causal: never a later key
        return s

    def lse(self, h: int) -> np.ndarray:
        """(T,) log-sum-exp of every row of head h, in row chunks (never T×T at once)."""
        with self._lock:
            got = self._lse.get(h)
        if got is not None:
            return got
        t = self.shape[1]
        out = np.empty(t, np.float32)
        cols = np.arange(self.shape[2])
        for r0 in range(0, t, 256):
            rows = np.arange(r0, min(t, r0 + 256))
            s = self._scores(h, rows, cols[: rows[-1] + 1])  # (r, ≤T): keys up to the last query
            m = s.max(axis=1, keepdims=True)
            s -= m
            out[rows] = m[:, 0] + np.log(np.exp(s, out=s).sum(axis=1, dtype=np.float64)).astype(np.float32)
        with self._lock:
            self._lse[h] = out
        return out

    def block(self, heads=None, rows=None, cols=None) -> np.ndarray:
        """(h, r, c) float32 probabilities; each argument None, a slice or an index array (as Trace.probs)."""
        h_all, tq, tk = self.shape
        hs = np.arange(h_all)[heads if heads is not None else slice(None)]
        rs = np.arange(tq)[rows if rows is not None else slice(None)]
        cs = np.arange(tk)[cols if cols is not None else slice(None)]
        if not self.allow_full and len(rs) == tq and len(cs) == tk:  # every row and column: T×T per head
            raise WholeMapAsked(f"a whole {len(rs)}×{len(cs)} map was asked for")
        out = np.empty((len(hs), len(rs), len(cs)), np.float32)
        for n, h in enumerate(np.atleast_1d(hs)):
            s = self._scores(int(h), rs, cs)
            s -= self.lse(int(h))[rs, None].astype(np.float32)
            out[n] = np.exp(s, out=s)
        self.cells += out.size
        return out

    def row(self, i: int) -> np.ndarray:
        return self.block(None, slice(i, i + 1), None)[:, 0]

    def full(self) -> np.ndarray:
        if not self.allow_full:
            raise WholeMapAsked(f"the whole {self.shape} map was asked for")
        return self.block()


class BlockTrace(Trace):
    """A Trace over :class:`BlockProbs` providers: ``Trace.probs`` asks their ``block`` for just the block
    asked (with its arguments checked against the map's shape), as a capture's recomputation does."""


def _shape_heads(q: np.ndarray, k: np.ndarray, group: int) -> None:
    """Give the random heads something to look at (in place): even heads read the previous token (sinusoidal
    features of i in q and of j + 1 in k, so q_i·k_j peaks at j = i − 1), odd heads the first token (a sink)."""
    T, d = q.shape[1], q.shape[2]
    pos = np.arange(T, dtype=np.float32)
    freqs = 1.0 / (10.0 ** np.linspace(0, 3, d // 4, dtype=np.float32))  # (d/4,)
    for h in range(q.shape[0]):
        kh = h // group
        if h % 2 == 0:
            q[h, :, : d // 2] = 3 * np.concatenate([np.cos(np.outer(pos, freqs)), np.sin(np.outer(pos, freqs))], 1)
            k[kh, :, : d // 2] = 3 * np.concatenate([np.cos(np.outer(pos + 1, freqs)),
                                                     np.sin(np.outer(pos + 1, freqs))], 1)
        else:
            q[h, :, 0], k[kh, :, 0], k[kh, 0, 0] = 4.0, 0.0, 4.0  # key 0 scores 16·scale above the rest


def on_demand_trace(T: int, n_layers: int = 2, n_heads: int = 2, n_kv_heads: int | None = None, d_head: int = 16,
                    seed: int = 0, allow_full: bool = False) -> BlockTrace:
    """A causal decoder's trace of ``T`` tokens: q, k, v per layer and probabilities only as blocks."""
    rng = np.random.default_rng(seed)
    n_kv = n_kv_heads or n_heads
    arrays, deferred = {}, {}
    for layer in range(n_layers):
        q = rng.standard_normal((n_heads, T, d_head), dtype=np.float32)  # (H, T, dh)
        k = rng.standard_normal((n_kv, T, d_head), dtype=np.float32)  # (H_kv, T, dh)
        _shape_heads(q, k, n_heads // n_kv)
        arrays[f"L{layer}.q"], arrays[f"L{layer}.k"] = q, k
        arrays[f"L{layer}.v"] = rng.standard_normal((n_kv, T, d_head), dtype=np.float32)
        deferred[f"L{layer}.probs"] = BlockProbs(q, k, 1.0 / np.sqrt(d_head), allow_full)
    meta = {"kind": "decoder", "n_layers": n_layers, "n_heads": n_heads, "n_kv_heads": n_kv,
            "scale": float(1.0 / np.sqrt(d_head)), "causal": True, "grid": None}
    return BlockTrace(tokens=[f"tok{i}" for i in range(T)], meta=meta, arrays=arrays, deferred=deferred)


def capture_format_trace(T: int, n_heads: int = 1, d_head: int = 64, seed: int = 0) -> Trace:
    """A one-layer causal trace in the capture's own on-demand form (q, k, each row's log-sum-exp and a
    :class:`~attnviz.capture.on_demand.ScoreRule`), so blocks come from the provider a real model's long
    trace uses (float64 row chunks), not :class:`BlockProbs`. The log-sum-exp is :meth:`BlockProbs.lse`'s."""
    from attnviz.capture.on_demand import ScoreRule, attach, register

    src = on_demand_trace(T, n_layers=1, n_heads=n_heads, d_head=d_head, seed=seed)
    block = src.deferred["L0.probs"]
    lse = np.stack([block.lse(h) for h in range(n_heads)])  # (H, T)
    arrays = {"L0.q": src.arrays["L0.q"], "L0.k": src.arrays["L0.k"], "L0.v": src.arrays["L0.v"]}
    meta = dict(src.meta)
    register(arrays, meta, "L0.", lse, ScoreRule(scale=float(block.scale), causal=True))
    deferred: dict = {}
    attach(arrays, meta, deferred)
    return Trace(tokens=list(src.tokens), meta=meta, arrays=arrays, deferred=deferred)
