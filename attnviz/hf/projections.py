"""Which weights made a recorded attention call's queries, keys, values and output (Qt-free).

An :class:`~attnviz.hf.attention_record.AttentionCall` holds the attention module's children's outputs
(``call.proj``) and the tensors the attention function received. This finds, by the names transformers
gives them, the Q/K/V projections (separate, or fused in one matrix with a known column layout) and the
output projection, and *checks* each reading against the call itself: the value projection must give
the values the function received, the query projection (after the module's per-head norm and rotation,
both read from the call) the queries, the output projection's input must be z. A reading that does not
check out is dropped and named as missing, never shown. A capture checks the first layer of each kind of
layer and reads that kind's other layers the same way (:mod:`attnviz.hf.check_memo`).

A model that multiplies q by a constant after the projection (OPT: ``q_proj(x) * scaling`` and then
``scaling=1.0`` in the call) is read as q = x W_Q + b_Q with that constant in the scale: the same scores.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch
from torch import nn

from attnviz.hf.check_memo import CheckMemo, kind_of

__all__ = ["ProjectionReading", "read_projections", "rotate", "rope_readings", "weight_xw", "is_linear", "sample_rows"]

_SEPARATE = {"q": ("q_proj", "query", "q_lin", "q", "Wq", "query_proj"),
             "k": ("k_proj", "key", "k_lin", "k", "Wk", "key_proj"),
             "v": ("v_proj", "value", "v_lin", "v", "Wv", "value_proj")}
# fused projections: "blocks" = columns [q (H·dh) | k (H_kv·dh) | v (H_kv·dh)]; "per_head" = per head
# [q_h | k_h | v_h] (GPT-NeoX's query_key_value)
_FUSED = {"c_attn": "blocks", "qkv_proj": "blocks", "Wqkv": "blocks", "qkv": "blocks", "query_key_value": "per_head"}
_OUT = ("o_proj", "out_proj", "dense", "c_proj", "out_lin", "o", "proj", "Wo")
_NORMS = {"q": ("q_norm", "q_layernorm", "query_layernorm"), "k": ("k_norm", "k_layernorm", "key_layernorm")}


@dataclass
class ProjectionReading:
    """What could be read from one call; every tensor is batch row 0. Weights in x W + b orientation."""

    weights: dict = field(default_factory=dict)  # W_q, W_k, W_v (D, heads·dh), b_*, W_o (H·dh, D), b_o
    q_proj: torch.Tensor | None = None  # (H, Tq, dh) x W_Q + b_Q
    k_proj: torch.Tensor | None = None  # (H_kv, Tk, dh)
    q_pre_rope: torch.Tensor | None = None  # (H, Tq, dh) entering the rotation (after a per-head norm)
    k_pre_rope: torch.Tensor | None = None
    q_factor: float = 1.0  # query = factor · rotate(q_pre_rope)
    rope_reading: int = 0  # which of rope_readings(call.rope) the keys matched
    out: torch.Tensor | None = None  # (Tq, D) the output projection's result
    qk_norm: bool = False
    missing: list[str] = field(default_factory=list)


def weight_xw(mod: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight in ``x W + b`` orientation (fan_in, out) and bias (zeros when absent); nn.Linear stores Wᵀ,
    GPT-2's Conv1D W."""
    w = mod.weight.T if isinstance(mod, nn.Linear) else mod.weight
    b = mod.bias if getattr(mod, "bias", None) is not None else torch.zeros(w.shape[1], dtype=w.dtype,
                                                                            device=w.device)
    return w.detach(), b.detach()


def rotate(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding, transformers' ``rotate_half`` convention, on the first cos.shape[-1] dimensions.

    t (heads, T, dh); cos, sin (T, d_rot)."""
    d = cos.shape[-1]
    rot, rest = t[..., :d], t[..., d:]
    half = d // 2
    turned = torch.cat((-rot[..., half:], rot[..., :half]), dim=-1)
    return torch.cat((rot * cos + turned * sin, rest), dim=-1)


def rope_readings(rope, dh: int) -> list:
    """The ways a call's rotary tables (cos, sin) may be applied, as (cos, sin) in :func:`rotate`'s convention.

    transformers' ``rotate_half`` tables are (T, d_rot), each frequency twice (cos = [c, c]). GPT-OSS's are
    half-width, (T, dh/2), one column per frequency, and its ``_apply_rotary_emb`` splits x into halves
    [x1, x2] and returns [x1·c − x2·s, x2·c + x1·s]: that is :func:`rotate` with the tables [c, c] and [s, s]
    (the same products and sums, so the same rounding). Tables of half the head width are also what a
    ``rotate_half`` model rotating half its dimensions passes (GPT-NeoX's ``rotary_pct`` 0.5), so both
    readings are offered, that one first, and the call's own keys decide (:func:`_check_qkv`)."""
    if rope is None:
        return [None]
    cos, sin = rope
    out = [rope]
    if 2 * cos.shape[-1] == dh:
        out.append((torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)))
    return out


def _heads(t: torch.Tensor, dh: int) -> torch.Tensor:
    return t.reshape(t.shape[0], -1, dh).transpose(0, 1)  # (T, heads·dh) → (heads, T, dh)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal up to float rounding; non-finite entries (a NaN weight) must sit in the same places."""
    if a.shape != b.shape:
        return False
    if not a.numel():
        return True
    a, b = a.float(), b.float()
    finite = torch.isfinite(a)
    if not torch.equal(finite, torch.isfinite(b)):
        return False
    if not bool(finite.all()):  # (every entry finite is the rule: one check per layer's reading, no copies)
        a, b = a[finite], b[finite]
        if not b.numel():
            return True
    tol = 1e-4 * max(1.0, float(b.abs().max()))
    return bool((a - b).abs().max() <= tol)


def _columns(call, H: int, Hkv: int, dh: int):
    """{"q"/"k"/"v": (module, column index tensor or None = all columns)} from the module's children."""
    if getattr(call, "columns", None):  # a family adapter read the fused layout (attnviz.hf.own_attention)
        return call.columns
    module = call.module
    found = {}
    for part, names in _SEPARATE.items():
        name = next((n for n in names if n in call.proj and isinstance(getattr(module, n, None), nn.Module)), None)
        if name is not None:
            found[part] = (name, None)
    if len(found) == 3:
        return found
    for name, layout in _FUSED.items():
        if name not in call.proj:
            continue
        if layout == "blocks":
            edges = [0, H * dh, (H + Hkv) * dh, (H + 2 * Hkv) * dh]
            cols = {p: torch.arange(edges[i], edges[i + 1]) for i, p in enumerate("qkv")}
        else:
            if H != Hkv:
                return {}
            base = torch.arange(H)[:, None] * 3 * dh
            cols = {p: (base + i * dh + torch.arange(dh)[None]).reshape(-1) for i, p in enumerate("qkv")}
        return {p: (name, c) for p, c in cols.items()}
    return {}


def is_linear(mod) -> bool:
    return isinstance(mod, nn.Linear) or type(mod).__name__ == "Conv1D"


def _out_module(call):
    """The output projection among the attention module's own children, with what it saw."""
    for name in _OUT:
        if name in call.proj and is_linear(getattr(call.module, name, None)):
            return getattr(call.module, name), call.proj[name]
    return None, None


def read_projections(call, out_seen: tuple | None, out_module: nn.Module | None,
                     memo: CheckMemo | None = None) -> ProjectionReading:
    """Read and check the projections of one call.

    Parameters
    ----------
    call : a kept AttentionCall.
    out_seen, out_module : (input, output) and module of an output projection outside the attention
        module (BERT's ``attention.output.dense``), or None.
    memo : the capture's record of checks passed per kind of layer (:mod:`attnviz.hf.check_memo`): a reading
        that passed on the first layer of this call's kind is read the same way here without checking again.
    """
    r = ProjectionReading()
    kind = kind_of(call) if memo is not None else None
    q, k, v = call.query[0], call.key[0], call.value[0]
    H, Hkv, dh = q.shape[0], k.shape[0], q.shape[-1]
    cols = _columns(call, H, Hkv, dh)
    if not cols:
        r.missing.append("W_Q, W_K, W_V (projections not found)")
    else:
        outs = {}
        for p, (name, idx) in cols.items():
            W, b = weight_xw(getattr(call.module, name))
            O = call.proj[name][1][0]  # (T, F)
            if idx is not None:
                W, b, O = W[:, idx], b[idx], O[:, idx]
            r.weights[f"W_{p}"], r.weights[f"b_{p}"] = W, b
            outs[p] = _heads(O, dh)
        plan = memo.get(kind, "qkv") if memo is not None else None
        if plan is not None:
            _apply_qkv(r, call, outs, plan)
            ok = True
        else:
            ok = _check_qkv(r, call, outs, q, k, v)
            if ok and memo is not None and r.q_factor == 1.0:  # a folded constant is checked in every layer
                memo.remember(kind, "qkv", r.rope_reading)
        if not ok:
            r.weights.clear()
            r.q_proj = r.k_proj = r.q_pre_rope = r.k_pre_rope = None
            r.missing.append("W_Q, W_K, W_V (the projections do not reproduce the queries/keys/values)")
    module, seen = _out_module(call)
    if module is None and out_module is not None:
        module, seen = out_module, out_seen
    z = call.z[0].reshape(call.z.shape[1], -1)  # (Tq, H·dh)
    pick = _sample(z.shape[0])
    found = module is not None and seen is not None and seen[0] is not None and seen[0].shape[-2:] == z.shape
    checked = found and memo is not None and memo.get(kind, "out") is not None
    if not found or not (checked or _close(seen[0][0][pick], z[pick])):
        r.missing.append("W_O (output projection not found)")
    else:
        if memo is not None:
            memo.remember(kind, "out", True)
        r.weights["W_o"], r.weights["b_o"] = weight_xw(module)
        r.out = seen[1][0]
    return r


@functools.lru_cache(maxsize=64)
def _sample(T: int) -> torch.Tensor:
    """The positions a reading is checked at: first, middle, last. A column layout or a rotation that is
    wrong is wrong at every position, and checking three keeps the check off the capture's time. Kept per T
    (every layer of a capture asks for the same three; read only, as an index)."""
    return torch.tensor(sorted({0, T // 2, T - 1}))


sample_rows = _sample  # the same three positions for the checks of other modules (hf/layer_arrays.py)


def _pre_rope(r: ProjectionReading, call, outs: dict) -> dict:
    """{"q"|"k": (heads, T, dh)} entering the rotation: the projections' outputs, or a per-head norm's after them."""
    r.q_proj, r.k_proj = outs["q"], outs["k"]
    pre = {}
    for p, t in (("q", outs["q"]), ("k", outs["k"])):
        norm = next((n for n in _NORMS[p] if n in call.proj), None)
        if norm is not None:  # a per-head norm between projection and rotation (Qwen 3, Gemma 3, OLMo 2)
            t = call.proj[norm][1][0]
            t = t.transpose(0, 1) if t.dim() == 3 and t.shape[1] == outs[p].shape[0] else _heads(t, outs[p].shape[-1])
            r.qk_norm = True
        pre[p] = t
    return pre


def _apply_qkv(r: ProjectionReading, call, outs: dict, reading: int) -> None:
    """The reading :func:`_check_qkv` found on the first layer of this call's kind (``reading``: which of
    :func:`rope_readings` matched), applied without the checks."""
    pre = _pre_rope(r, call, outs)
    tables = rope_readings(call.rope, call.query.shape[-1])[reading]
    r.rope_reading = reading
    if tables is not call.rope:  # the widened half-width tables (see _check_qkv)
        call.rope = tables
    if call.rope is not None:
        r.q_pre_rope, r.k_pre_rope = pre["q"], pre["k"]


def _check_qkv(r: ProjectionReading, call, outs: dict, q, k, v) -> bool:
    tq, tk = _sample(q.shape[1]), _sample(k.shape[1])
    if not _close(outs["v"][:, tk], v[:, tk]):
        return False
    pre = _pre_rope(r, call, outs)
    for r.rope_reading, tables in enumerate(rope_readings(call.rope, q.shape[-1])):
        turned = {}
        for p, pick in (("q", tq), ("k", tk)):
            rows = pre[p][:, pick]
            turned[p] = rotate(rows, tables[0][0][pick], tables[1][0][pick]) if tables is not None else rows
        if _close(turned["k"], k[:, tk]):
            break
    else:
        return False
    if tables is not call.rope:
        # GPT-OSS's half-width tables, widened: the trace keeps them in the one convention every reader of
        # ``rope_cos``/``rope_sin`` uses (the walkthrough's rotation, undoing it for q and k before it)
        call.rope = tables
    want = q[:, tq]
    if not _close(turned["q"], want):  # a constant factor folded into q after the projection (OPT)
        denom = float((turned["q"].double() ** 2).sum())
        factor = float((turned["q"].double() * want.double()).sum()) / denom if denom else 0.0
        if not factor or not _close(turned["q"] * factor, want):
            return False
        r.q_factor = factor
    if call.rope is not None:
        r.q_pre_rope, r.k_pre_rope = pre["q"], pre["k"]
    return True
