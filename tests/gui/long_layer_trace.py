"""A one-layer causal decoder's trace of 16,384 tokens with everything the walkthrough reads (x, W, z, out)
and probabilities and mask that exist only as blocks: asking either for its whole (T, T) raises.

q = x W_Q + b_Q and k, v likewise (no rotary), so the walkthrough's recomputation and the trace agree; z is
P V computed in row blocks here (float64), out = concat(z) W_O + b_O.
"""

from __future__ import annotations

import numpy as np

from attnviz.bench.on_demand_traces import BlockProbs, BlockTrace, WholeMapAsked


class BlockMask:
    """A causal (Tq, Tk) additive mask given by rows and blocks; ``full()`` raises."""

    def __init__(self, t: int):
        self.shape = (t, t)

    def block(self, rows=None, cols=None) -> np.ndarray:
        rs = np.arange(self.shape[0])[rows if rows is not None else slice(None)]
        cs = np.arange(self.shape[1])[cols if cols is not None else slice(None)]
        if len(rs) == self.shape[0] and len(cs) == self.shape[1]:
            raise WholeMapAsked("the whole mask was asked for")
        return np.where(cs[None, :] > np.atleast_1d(rs)[:, None], -np.inf, 0.0).astype(np.float32)

    def row(self, i: int) -> np.ndarray:
        return self.block(slice(i, i + 1), None)[0]

    def full(self) -> np.ndarray:
        raise WholeMapAsked(f"the whole {self.shape} mask was asked for")


def long_layer_trace(T: int = 16_384, D: int = 16, H: int = 2, dh: int = 8, seed: int = 0) -> BlockTrace:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D)).astype(np.float32)
    W = {n: (rng.standard_normal((D, H * dh)) / np.sqrt(D)).astype(np.float32) for n in "qkv"}
    b = {n: (0.1 * rng.standard_normal(H * dh)).astype(np.float32) for n in "qkv"}
    W["o"] = (rng.standard_normal((H * dh, D)) / np.sqrt(H * dh)).astype(np.float32)
    b["o"] = (0.1 * rng.standard_normal(D)).astype(np.float32)

    def heads(m):  # (T, H·dh) → (H, T, dh)
        return m.reshape(T, H, dh).transpose(1, 0, 2)

    x64 = x.astype(np.float64)
    q, k, v = (heads(x64 @ W[n] + b[n]) for n in "qkv")  # (H, T, dh) float64
    scale = 1.0 / np.sqrt(dh)
    probs = BlockProbs(q.astype(np.float32), k.astype(np.float32), scale)
    z = np.empty((H, T, dh))
    for r0 in range(0, T, 1024):  # exact rows: a float64 softmax over the keys up to each query
        r = np.arange(r0, min(T, r0 + 1024))
        s = q[:, r] @ k.transpose(0, 2, 1) * scale  # (H, r, T)
        s[:, np.arange(T)[None, :] > r[:, None]] = -np.inf
        s -= s.max(-1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(-1, keepdims=True)
        z[:, r] = p @ v
    out = z.transpose(1, 0, 2).reshape(T, H * dh) @ W["o"] + b["o"]
    arrays = {"L0.x": x, "L0.z": z.astype(np.float32), "L0.out": out.astype(np.float32),
              "L0.q": q.astype(np.float32), "L0.k": k.astype(np.float32), "L0.v": v.astype(np.float32)}
    for n in "qkvo":
        arrays[f"L0.W_{n}"], arrays[f"L0.b_{n}"] = W[n], b[n]
    meta = {"kind": "decoder", "n_layers": 1, "n_heads": H, "n_kv_heads": H, "kv_group": 1, "d_head": dh,
            "d_model": D, "scale": float(scale), "causal": True, "grid": None}
    return BlockTrace(tokens=[f"w{i}" for i in range(T)], meta=meta, arrays=arrays,
                      deferred={"L0.probs": probs, "L0.mask": BlockMask(T)})
