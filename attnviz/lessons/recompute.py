"""Self-attention recomputed in numpy (float64) from a layer's input and weights alone.

The lesson's claims compare these numbers with what the model recorded. The weights come either from
a trace (``L{i}.W_q`` … with ``q = x W_q + b_q``) or from the attention module itself (a torch Linear
holds Wᵀ); both give the same dictionary, so one recomputation serves a trace and a batch of held-out
inputs. Qt-free.
"""

from __future__ import annotations

import numpy as np

__all__ = ["weights_from_trace", "weights_from_module", "recompute_attention", "softmax", "max_err"]

_NAMES = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o")


def weights_from_trace(trace, layer: int) -> dict:
    """The weights, scale and head layout of self-attention layer ``layer`` as the trace recorded them."""
    w = {k: np.asarray(trace[f"L{layer}.{k}"], np.float64) for k in _NAMES}
    H = trace.n_heads
    gate = trace[f"L{layer}.head_gate"] if f"L{layer}.head_gate" in trace else np.ones(H)
    described = trace.description
    w.update(H=H, n_kv=described.kv_heads, dh=int(described.d_head), scale=float(described.scale),
             gate=np.asarray(gate, np.float64))
    return w


def weights_from_module(attn) -> dict:
    """The same dictionary read from an :class:`attnviz.models.attention.Attention` module."""
    def lin(m):
        W = m.weight.detach().double().cpu().numpy().T  # torch keeps (out, in); x @ W wants (in, out)
        b = m.bias.detach().double().cpu().numpy() if m.bias is not None else np.zeros(W.shape[1])
        return W, b

    w = {}
    for name, m in (("q", attn.q_proj), ("k", attn.k_proj), ("v", attn.v_proj), ("o", attn.o_proj)):
        w[f"W_{name}"], w[f"b_{name}"] = lin(m)
    gate = attn.head_gate.detach().double().cpu().numpy() if attn.head_gate is not None else np.ones(attn.n_heads)
    w.update(H=attn.n_heads, n_kv=attn.n_kv_heads, dh=attn.d_head, scale=float(attn.scale), gate=gate)
    return w


def softmax(x: np.ndarray) -> np.ndarray:
    """Row softmax that treats −∞ as weight 0 (masked keys)."""
    m = np.max(np.where(np.isfinite(x), x, -np.inf), axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(-1, keepdims=True)


def recompute_attention(x: np.ndarray, mask: np.ndarray, w: dict) -> dict:
    """q, k, v, P, Z and out from ``x`` (…, T, D) and the additive ``mask`` (broadcastable to (…, T, T)).

    Every array keeps ``x``'s leading axes: P is (…, H, T, T), out is (…, T, D).
    """
    x = np.asarray(x, np.float64)
    *lead, T, _ = x.shape
    H, n_kv, dh = w["H"], w["n_kv"], w["dh"]

    def heads(y, n):  # (…, T, n·dh) → (…, n, T, dh)
        return np.swapaxes(y.reshape(*lead, T, n, dh), -3, -2)

    q = heads(x @ w["W_q"] + w["b_q"], H)
    k = np.repeat(heads(x @ w["W_k"] + w["b_k"], n_kv), H // n_kv, axis=-3)  # query head h reads kv head h // group
    v = np.repeat(heads(x @ w["W_v"] + w["b_v"], n_kv), H // n_kv, axis=-3)
    P = softmax(q @ np.swapaxes(k, -1, -2) * w["scale"] + np.asarray(mask, np.float64))  # (T, T) broadcasts
    z = P @ v
    gated = z * w["gate"][:, None, None]
    concat = np.swapaxes(gated, -3, -2).reshape(*lead, T, H * dh)
    return {"q": q, "k": k, "v": v, "P": P, "z": z, "out": concat @ w["W_o"] + w["b_o"]}


def max_err(a, b) -> float:
    """Largest absolute difference of two arrays (float64)."""
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
