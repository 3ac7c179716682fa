"""Self-attention in six steps, recomputed in float64 numpy from a Trace (the walkthrough's numbers).

For one query position i of one head (the six steps of "The Illustrated Transformer"):

1. q_i = x_i W_Q + b_Q,  k_j = x_j W_K + b_K,  v_j = x_j W_V + b_V; rotary models then turn q_i and
   k_j by their positions (:mod:`attnviz.analysis.rotary`), after a per-head norm where the model has one
2. score_j = q_i · k_j
3. scaled_j = score_j · scale (1/√d_head by default; the model's own, e.g. Gemma 2's
   query_pre_attn_scalar^-½), soft-capped where the model caps (c·tanh(scaled/c)), then an additive bias
   (relative / ALiBi, when the trace has one) and the mask row (0 or −inf: causal, padding, sliding window)
4. w = softmax(masked)
5. weighted_j = w_j · v_j
6. z_i = Σ_j weighted_j

Everything is recomputed from the block input x and the weights, never copied from the trace, and
compared with the z the model produced (``max_error``) — the walkthrough proves its own arithmetic.
:func:`compute_matrix_form` does the same for all positions and heads at once (Q = X W_Q, …).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from attnviz.analysis.decoder_positions import row_labels
from attnviz.analysis.rotary import rotary_parts
from attnviz.analysis.steps_inputs import (as_f64, bias_row, block_f64, check_block, head_slice, kv_key, mask_blocks,
                                          out_rows, position_rows, project_rows, query_heads_sharing, require_qkv,
                                          soft_cap, token_labels)
from attnviz.analysis.steps_rows import scored_rows
from attnviz.errors import InputError

__all__ = ["SixSteps", "MatrixForm", "compute_six_steps", "compute_matrix_form", "to_plain", "softmax"]

def to_plain(value):
    """Arrays and numpy scalars as JSON-ready lists/floats; non-finite numbers as "inf"/"-inf"/"nan"."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "US":
            return value.tolist()
        return [to_plain(v) for v in value] if value.ndim else to_plain(value.item())
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def softmax(masked: np.ndarray, sink=None) -> np.ndarray:
    """Softmax over the last axis; −inf entries get exactly 0, a fully masked row is all 0.

    ``sink`` (a scalar, or one per row shaped like ``masked[..., :1]``): a learned attention sink (GPT-OSS),
    one more logit in each row's normaliser whose weight goes nowhere, so the row sums to less than 1
    (transformers' ``eager_attention_forward`` of GPT-OSS: softmax over [scores, sink], the sink's column dropped).
    """
    top = np.max(masked, axis=-1, keepdims=True)
    if sink is not None:
        top = np.maximum(top, sink)
    top = np.where(np.isfinite(top), top, 0.0)  # fully masked row: avoid inf - inf
    e = np.exp(masked - top)
    total = e.sum(axis=-1, keepdims=True)
    if sink is not None:
        total = total + np.exp(sink - top)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@dataclass
class SixSteps:
    """Every number of the six steps for one query of one head (float64 arrays)."""

    part: str
    layer: int
    head: int
    kv_head: int  # the key/value head this query head reads (GQA: head // kv_group)
    query: int
    query_token: str
    key_tokens: list[str]
    kv_source: str  # "recomputed" (k, v from x and W) or "trace" (cross-attention without x_kv)
    x_i: np.ndarray  # (D,)
    W_Q: np.ndarray  # (D, dh)
    W_K: np.ndarray
    W_V: np.ndarray
    b_Q: np.ndarray  # (dh,)
    b_K: np.ndarray
    b_V: np.ndarray
    q_i: np.ndarray  # (dh,)
    k: np.ndarray  # (Tk, dh)
    v: np.ndarray  # (Tk, dh)
    scores: np.ndarray  # (Tk,) q_i · k_j
    scale: float
    scaled: np.ndarray  # (Tk,)
    mask: np.ndarray  # (Tk,) 0 or -inf
    masked: np.ndarray  # (Tk,)
    weights: np.ndarray  # (Tk,) softmax
    weighted: np.ndarray  # (Tk, dh) w_j · v_j
    z_i: np.ndarray  # (dh,)
    z_trace: np.ndarray  # (dh,) what the model computed
    weights_trace: np.ndarray  # (Tk,)
    max_error: float  # max |z_i - z_trace|
    max_weight_error: float  # max |weights - weights_trace|
    # what modern attention adds (None / empty where the model has no such part)
    kv_group: int = 1  # query heads per key/value head
    heads_sharing_kv: list = None  # the query heads that read this kv head (GQA), this one included
    q_proj_i: np.ndarray | None = None  # (dh,) x_i W_Q + b_Q before a per-head norm and the rotation
    q_pre_rope_i: np.ndarray | None = None  # (dh,) entering the rotation
    k_pre_rope: np.ndarray | None = None  # (Tk, dh)
    rope_cos_i: np.ndarray | None = None  # (d_rot,) the table row of position i
    rope_sin_i: np.ndarray | None = None
    rotary_dims: int = 0
    distance: np.ndarray | None = None  # (Tk,) j − i
    scores_by_distance: np.ndarray | None = None  # (Tk,) from unrotated q, k and the distance's table row
    rotary_error: float | None = None  # max |scores_by_distance − scores|
    qk_norm: bool = False  # q/k pre-rotation came from the trace (the model's per-head norm), not recomputed
    softcap: float | None = None
    capped: np.ndarray | None = None  # (Tk,) softcap·tanh(scaled / softcap)
    bias: np.ndarray | None = None  # (Tk,) additive bias row (relative / ALiBi)
    sliding_window: int | None = None
    sink: float | None = None  # the head's learned attention sink (GPT-OSS): a logit only in the normaliser
    # a long input's steps show a window of keys (analysis.steps_window.key_window): the first one's
    # position and how many keys the softmax ran over (None: every key is shown)
    key_offset: int = 0
    n_keys: int | None = None
    compute_dtype: str = "float32"  # what the model ran in: max_error is that dtype's rounding (float16: ~1e-3)

    def to_json(self) -> dict:
        """Plain-Python dict (lists, floats, strings; −inf as "-inf") for ``json.dumps``."""
        return {f.name: to_plain(getattr(self, f.name)) for f in fields(self)}


def compute_six_steps(trace, layer: int, head: int, query: int, part: str = "self") -> SixSteps:
    """Recompute one query's attention output step by step from the trace's x and weights.

    Parameters
    ----------
    trace : a Trace captured with float32 (or float16) arrays.
    layer, head, query : indices (query is a position of the block's query tokens).
    part : "self", "cross" (decoder cross-attention of an encoder–decoder) or "enc" (its encoder).

    Returns
    -------
    SixSteps with every intermediate and the error against the traced z.
    """
    prefix = check_block(trace, part, layer, head)
    require_qkv(trace, prefix)
    n_q = trace.shape(prefix + "x")[0]  # x (Tq, D) itself is read a row block at a time, never whole in float64
    if not 0 <= query < n_q:
        raise InputError(f"query {query} is out of range: the input has {n_q} positions (0..{n_q - 1})")
    described = trace.description
    group = described.kv_group
    kv_head = head // group
    W_Q, b_Q = head_slice(trace, prefix, "q", head)
    W_K, b_K = head_slice(trace, prefix, "k", kv_head)
    W_V, b_V = head_slice(trace, prefix, "v", kv_head)
    x_i = position_rows(trace, prefix + "x", query, query + 1)[0]  # (D,)
    q_i = x_i @ W_Q + b_Q  # (dh,)
    kv = kv_key(trace, prefix, part)
    if kv is not None:  # every key's k and v (Tk, dh): O(T · d_head), from x a row block at a time
        k, v, source = project_rows(trace, kv, W_K, b_K), project_rows(trace, kv, W_V, b_V), "recomputed"
    else:  # the key head's rows alone, not every head's in float64
        k, v, source = (block_f64(trace, prefix + "k", kv_head, slice(None)),
                        block_f64(trace, prefix + "v", kv_head, slice(None)), "trace")
    extra = {"kv_group": group, "heads_sharing_kv": query_heads_sharing(trace, kv_head)}
    qk_norm = bool(described.qk_norm) and prefix + "q_pre_rope" in trace
    q_pre, k_pre = q_i, k
    if qk_norm:  # the model's per-head norm sits between projection and rotation: its output from the trace
        # one query's row and one key head: never every head's (T, dh) in float64 (a long trace recomputes them)
        q_pre = block_f64(trace, prefix + "q_pre_rope", head, query)  # (dh,)
        k_pre = block_f64(trace, prefix + "k_pre_rope", kv_head, slice(None))  # (Tk, dh)
    rot = rotary_parts(trace, prefix, q_pre, k_pre, query)
    if rot is not None:
        extra.update(q_proj_i=q_i, q_pre_rope_i=q_pre, k_pre_rope=k_pre, rope_cos_i=rot.cos_i, rope_sin_i=rot.sin_i,
                     rotary_dims=rot.dims, distance=rot.distance, qk_norm=qk_norm)
        q_i, k = rot.q_rot, rot.k_rot
    scores = k @ q_i  # (Tk,)
    if rot is not None:
        extra.update(scores_by_distance=rot.by_distance,
                     rotary_error=float(np.max(np.abs(rot.by_distance - scores))))
    scale = trace.attention_scale(prefix)
    scaled = scores * scale
    cap = trace.softcap(prefix) if hasattr(trace, "softcap") else None
    capped = soft_cap(scaled, cap)
    if cap:
        extra.update(softcap=cap, capped=capped)
    # one row of the mask and bias: a long input's (Tq, Tk) mask is never built (its row is computed alone)
    mask = np.asarray(trace.row(prefix + "mask", query), dtype=np.float64)
    bias = bias_row(trace, prefix, head, query)
    masked = capped + mask if bias is None else capped + bias + mask
    if bias is not None:
        extra["bias"] = bias
    windows = described.sliding_window
    if windows and part == "self" and layer < len(windows):
        extra["sliding_window"] = windows[layer]
    sink = None
    if prefix + "sinks" in trace:  # GPT-OSS: the head's learned sink enters the normaliser
        sink = float(np.asarray(trace[prefix + "sinks"], dtype=np.float64)[head])
        extra["sink"] = sink
    weights = softmax(masked, sink)
    weighted = weights[:, None] * v  # (Tk, dh)
    z_i = weighted.sum(axis=0)
    z_trace = np.asarray(trace[prefix + "z"][head, query], dtype=np.float64)  # (dh,): one row, not all of z
    w_trace = trace.probs(layer, part, heads=head, rows=query)[0, 0].astype(np.float64)  # one row of the map
    return SixSteps(
        part=part, layer=layer, head=head, kv_head=kv_head, query=query,
        # a cross-attention row looks at the source of the word being produced there: "→ un"
        query_token=token_labels(row_labels(trace, part), n_q)[query],
        key_tokens=token_labels(trace.key_tokens(part), k.shape[0]),
        kv_source=source, x_i=x_i, W_Q=W_Q, W_K=W_K, W_V=W_V, b_Q=b_Q, b_K=b_K, b_V=b_V,
        q_i=q_i, k=k, v=v, scores=scores, scale=scale, scaled=scaled, mask=mask, masked=masked,
        weights=weights, weighted=weighted, z_i=z_i, z_trace=z_trace, weights_trace=w_trace,
        max_error=float(np.max(np.abs(z_i - z_trace))),
        max_weight_error=float(np.max(np.abs(weights - w_trace))),
        compute_dtype=trace.description.compute_dtype or "float32", **extra,
    )


@dataclass
class MatrixForm:
    """Self-attention of one layer for all positions and heads as matrices (float64)."""

    part: str
    layer: int
    scale: float
    kv_source: str
    X: np.ndarray  # (Tq, D)
    Q: np.ndarray  # (H, Tq, dh)
    K: np.ndarray  # (H, Tk, dh) per query head (GQA kv heads repeated)
    V: np.ndarray  # (H, Tk, dh)
    QK: np.ndarray  # (H, Tq, Tk) Q Kᵀ
    scaled: np.ndarray  # (H, Tq, Tk)
    mask: np.ndarray  # (Tq, Tk)
    masked: np.ndarray  # (H, Tq, Tk)
    P: np.ndarray  # (H, Tq, Tk) softmax
    Z: np.ndarray  # (H, Tq, dh) P V
    concat: np.ndarray  # (Tq, H·dh) (each head's Z times its ablation gate, when the trace has one)
    W_O: np.ndarray  # (H·dh, D)
    b_O: np.ndarray  # (D,)
    out: np.ndarray  # (Tq, D) concat · W_O + b_O
    out_trace: np.ndarray  # (Tq, D)
    max_error: float  # max |out - out_trace|
    kv_group: int = 1
    Q_pre: np.ndarray | None = None  # (H, Tq, dh) before the rotation (rotary models; Q is after it)
    K_pre: np.ndarray | None = None  # (H, Tk, dh)
    rotary_dims: int = 0
    softcap: float | None = None
    capped: np.ndarray | None = None  # (H, Tq, Tk) softcap·tanh(scaled / softcap)
    bias: np.ndarray | None = None  # (H, Tq, Tk) additive bias (relative / ALiBi)
    sinks: np.ndarray | None = None  # (H,) learned attention sinks (GPT-OSS): logits only in each row's normaliser
    # the positions shown: queries rows[0]…rows[1]−1 and keys cols[0]…cols[1]−1 of n_queries × n_keys (a long
    # input's window; the softmax and Z, out are over every key). None: all of them
    rows: tuple[int, int] | None = None
    cols: tuple[int, int] | None = None
    n_queries: int | None = None
    n_keys: int | None = None

    @property
    def windowed(self) -> bool:
        """True when only a window of the positions is shown."""
        return self.rows is not None and (self.rows[1] - self.rows[0], self.cols[1] - self.cols[0]) != \
            (self.n_queries, self.n_keys)

    def to_json(self) -> dict:
        return {f.name: to_plain(getattr(self, f.name)) for f in fields(self)}


def compute_matrix_form(trace, layer: int, part: str = "self", window: tuple[int, int] | None = None) -> MatrixForm:
    """Recompute a whole attention layer as matrix products: Q = X W_Q + b_Q, …, out = concat(Z) W_O + b_O.

    ``window`` (a, b): only queries a…b−1, and the keys at the same positions (cross-attention: the first
    b − a source positions), are returned, for a long input whose (T, T) maps cannot be shown or held. Each
    row's softmax (and so P, Z and out) is still over every key: the window's rows are scored against every
    key a block of keys at a time (:func:`attnviz.analysis.steps_rows.scored_rows`), O((b − a) · T) work but
    O((b − a) · block) memory, and only the window's rows of X (and of the model's out) are read. Every array
    returned is the window's own (none is a view that keeps a (T, ·) array alive).
    """
    prefix = check_block(trace, part, layer)
    require_qkv(trace, prefix)
    described = trace.description
    H, dh, group = described.n_heads, int(described.d_head), described.kv_group
    n_q = trace.shape(prefix + "x")[0]
    a, b = (0, n_q) if window is None else (max(0, int(window[0])), min(n_q, int(window[1])))
    X = position_rows(trace, prefix + "x", a, b)  # (Tq, D): the window's rows alone
    Tq = b - a

    def heads(m: np.ndarray) -> np.ndarray:
        return m.reshape(m.shape[0], -1, dh).transpose(1, 0, 2)  # (T, heads·dh) → (heads, T, dh)

    Q = heads(X @ as_f64(trace, prefix + "W_q") + as_f64(trace, prefix + "b_q"))  # (H, Tq, dh)
    kv = kv_key(trace, prefix, part)
    if kv is not None:  # every key's k and v: O(T · H_kv · d_head), from X a row block at a time
        # (Tk, H_kv·dh) → (H_kv, Tk, dh)
        K = heads(project_rows(trace, kv, as_f64(trace, prefix + "W_k"), as_f64(trace, prefix + "b_k")))
        V = heads(project_rows(trace, kv, as_f64(trace, prefix + "W_v"), as_f64(trace, prefix + "b_v")))
        source = "recomputed"
    else:
        K, V, source = as_f64(trace, prefix + "k"), as_f64(trace, prefix + "v"), "trace"
    n_k = K.shape[1]
    ka, kb = (0, n_k) if window is None else ((a, min(b, n_k)) if part != "cross" else (0, min(Tq, n_k)))
    extra = {"kv_group": group}
    if prefix + "rope_cos" in trace:
        from attnviz.analysis.rotary import rotate

        if described.qk_norm:  # the model's per-head norm output, from the trace
            Q = block_f64(trace, prefix + "q_pre_rope", slice(None), slice(a, b))  # (H, Tq, dh): the window's rows
            K = block_f64(trace, prefix + "k_pre_rope", slice(None), slice(None))  # (H_kv, Tk, dh): every key
        cos, sin = trace[prefix + "rope_cos"], trace[prefix + "rope_sin"]  # (T, d_rot)
        extra.update(Q_pre=Q, K_pre=np.repeat(K[:, ka:kb], group, axis=0), rotary_dims=cos.shape[-1])
        Q = rotate(Q, np.asarray(cos[a:b], np.float64), np.asarray(sin[a:b], np.float64))
        K = rotate(K, np.asarray(cos[:n_k], np.float64), np.asarray(sin[:n_k], np.float64))
    scale = trace.attention_scale(prefix)
    cap = trace.softcap(prefix)
    mask = mask_blocks(trace, prefix + "mask", a, b)  # (c0, c1) → (Tq, c1 − c0): a key block of the rows' mask
    bias = trace[prefix + "bias"] if prefix + "bias" in trace else None  # (H or 1, Tq_all, Tk), read per key block
    sinks = as_f64(trace, prefix + "sinks") if prefix + "sinks" in trace else None  # (H,) GPT-OSS
    rows = scored_rows(Q, K, V, scale, cap, mask, None if bias is None else (bias, a, b), (ka, kb), sinks)
    if sinks is not None:
        extra["sinks"] = sinks
    if cap:
        extra["softcap"], extra["capped"] = cap, rows.capped
    if bias is not None:
        extra["bias"] = rows.bias
    Z = rows.Z  # (H, Tq, dh): P over every key times V
    # a head ablated by the what-if lab is scaled after z was recorded; a trace that stores the gate
    # (``head_gate``, (H,)) is reproduced exactly
    gate = as_f64(trace, prefix + "head_gate") if prefix + "head_gate" in trace else np.ones(H)
    concat = (Z * gate[:, None, None]).transpose(1, 0, 2).reshape(Tq, H * dh)  # (Tq, H·dh), head-major
    W_O, b_O = as_f64(trace, prefix + "W_o"), as_f64(trace, prefix + "b_o")
    out = concat @ W_O + b_O
    out_trace = out_rows(trace, prefix, a, b)
    return MatrixForm(
        part=part, layer=layer, scale=scale, kv_source=source, X=X, Q=Q,
        K=np.repeat(K[:, ka:kb], group, axis=0), V=np.repeat(V[:, ka:kb], group, axis=0),  # per query head
        QK=rows.QK, scaled=rows.scaled, mask=np.array(mask(ka, kb)), masked=rows.masked, P=rows.P, Z=Z,
        concat=concat, W_O=W_O, b_O=b_O, out=out, out_trace=out_trace, max_error=float(np.max(np.abs(out - out_trace))),
        rows=(a, b), cols=(ka, kb), n_queries=n_q, n_keys=n_k, **extra,
    )
