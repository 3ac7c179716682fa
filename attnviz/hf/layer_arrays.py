"""One recorded attention call → the Trace arrays of its layer (``L{i}.*``), and what the layer could not give.

Keys follow the Trace contract (README "The Trace"): ``x``, ``q`` (after rotation: what the scores are
made of), ``k``/``v`` as stored (H_kv heads), ``mask`` (0 / −inf: causal, padding, sliding window),
``bias`` (a finite additive bias inside the mask: relative position / ALiBi, only when nonzero),
``probs``, ``z``, ``out``, ``W_*``/``b_*``, ``h``, ``resid``; for rotary models also ``q_pre_rope``,
``k_pre_rope`` (entering the rotation) and ``rope_cos``/``rope_sin`` (T, d_rot) the model's own tables.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.capture.on_demand import register as register_on_demand
from attnviz.capture.recomputed import KINDS as RECOMPUTE_KINDS
from attnviz.capture.recomputed import describe as describe_recomputed
from attnviz.capture.weights import converted_once, parameter_view
from attnviz.hf.attention_record import blocked_map, split_mask
from attnviz.hf.block_record import X_INPUTS
from attnviz.hf.check_memo import CheckMemo, kind_of
from attnviz.hf.projections import ProjectionReading, sample_rows
from attnviz.hf.score_rule import rule_of

__all__ = ["call_arrays", "on_demand_arrays", "LayerFacts", "RECOMPUTE"]

# a fast-recorded (long) layer keeps q/k before rotation, v and the mid-block stream as rules over the arrays it
# keeps (attnviz.capture.recomputed: ~38 % fewer bytes written to disk); False stores them (tests compare both)
RECOMPUTE = True


class LayerFacts:
    """The description of one layer that goes into the trace's meta."""

    def __init__(self, call, reading: ProjectionReading | None):
        self.scale = float(call.scaling or 0.0) * (reading.q_factor if reading is not None else 1.0)
        self.softcap = call.softcap
        self.sliding_window = call.sliding_window
        self.n_kv_heads = int(call.key.shape[1]) if call.key is not None else None
        self.rotary_dims = int(call.rope[0].shape[-1]) if call.rope is not None else 0
        self.qk_norm = bool(reading and reading.qk_norm)
        self.sinks = call.sinks is not None
        self.missing = list(reading.missing) if reading is not None else []
        self.bias = False


def _heads_first(t: torch.Tensor) -> torch.Tensor:
    return t.transpose(0, 1)  # (T, H, dh) → (H, T, dh)


def _h_matches(block: dict, out: torch.Tensor | None, memo: CheckMemo | None = None, kind=None) -> bool:
    """A pre-LN block's R_mid is shown only if it is R + A (Llama, GPT-2, OPT, ViT …); checked on the first
    layer of each kind (``memo``)."""
    h, stream = block.get("h"), block.get("stream")
    if h is None or stream is None or out is None or h.shape != stream.shape:
        return False
    if memo is not None and memo.get(kind, "h") is not None:
        return True
    ok = _h_checked(h, stream, out)
    if ok and memo is not None:
        memo.remember(kind, "h", True)
    return ok


def _h_checked(h: torch.Tensor, stream: torch.Tensor, out: torch.Tensor) -> bool:
    T = h.shape[1]
    pick = sample_rows(T)  # three positions: a wrong R_mid is wrong everywhere
    want = stream[0, pick].float() + out[pick].float()
    tol = 1e-4 * max(1.0, float(want.abs().max()))
    return bool((h[0, pick].float() - want).abs().max() <= tol)


def _shared(masks: list, m: np.ndarray) -> np.ndarray:
    """One array per distinct mask (every causal layer has the same one)."""
    same = next((u for u in masks if u.shape == m.shape and np.array_equal(u, m)), None)
    if same is None:
        masks.append(m)
        return m
    return same


def _weight(owner, name: str, w: torch.Tensor) -> np.ndarray:
    """A weight in the dtype the model holds it: a CPU float32/float16 parameter is read in place (a read-only
    view, :mod:`attnviz.capture.weights`: every trace of the model shares it, none holds a copy); others (bfloat16:
    NumPy has none; another device) converted to float32 once per model, shared by its traces."""
    view = parameter_view(w)
    if view is not None:
        return view
    # cached only for a view of one of the module's own parameters (a bias made of zeros per call is not one)
    base = w.untyped_storage().data_ptr()
    own = any(prm.untyped_storage().data_ptr() == base for prm in owner.parameters())
    return converted_once(owner if own else None, name, w)


def on_demand_arrays(prefix: str, call, q: torch.Tensor, scale: float, conv, qk_dtype, rules: dict,
                     meta: dict) -> dict:
    """``q``, ``k``, ``lse`` and the score rule of a fast-recorded call (probabilities recomputed on demand:
    :mod:`attnviz.capture.on_demand`); ``qk_dtype`` the dtype q and k are kept in (exactness of every block)."""
    out = {prefix + "q": conv(q, qk_dtype), prefix + "k": conv(call.key[0], qk_dtype)}
    # float64 when attnviz computed lse itself in float64 (families with their own attention code): kept exact
    lse_dtype = np.float64 if call.lse.dtype == torch.float64 else np.float32
    register_on_demand(out, meta, prefix, conv(call.lse[0], lse_dtype), rule_of(call, scale, rules))
    return out


def call_arrays(i: int, call, reading: ProjectionReading, block: dict | None, conv, keep_out: bool,
                post_ln: bool, masks: list, masks_by_tensor: dict, qk_dtype=None,
                on_demand: dict | None = None, kept: dict | None = None,
                memo: CheckMemo | None = None) -> tuple[dict, LayerFacts]:
    """Arrays ``L{i}.*`` of one kept call (batch row 0) and its :class:`LayerFacts`.

    ``conv`` converts each distinct live tensor once: the caller keeps ``call`` and ``reading`` alive until
    every layer is converted; ``masks`` collects the distinct masks, ``masks_by_tensor`` each mask tensor's
    reading (the calls hold the tensors, so their ids stay theirs while the capture converts). A fast-recorded
    call (``call.lse``) keeps no probabilities or mask: its rule goes into ``on_demand`` (the trace's
    ``meta["on_demand"]``), and arrays that are functions of others it keeps go in as rules
    (``meta["recomputed"]``, :mod:`attnviz.capture.recomputed`); ``kept`` the arrays of earlier layers.; ``memo``
    the capture's checks passed per kind of layer (:mod:`attnviz.hf.check_memo`)."""
    p = f"L{i}."
    facts = LayerFacts(call, reading)
    q = call.query[0]
    if reading.q_factor != 1.0:  # the constant went into the scale (see attnviz.hf.projections)
        q = q / reading.q_factor
    out = {p + "v": conv(call.value[0]), p + "z": conv(_heads_first(call.z[0]))}
    if call.lse is not None:
        out.update(on_demand_arrays(p, call, q, facts.scale, conv, qk_dtype, masks_by_tensor, on_demand))
        if p + "score_bias" in out:  # the contract's name for a finite additive bias, the same array
            out[p + "bias"], facts.bias = out[p + "score_bias"], True
    else:
        out.update({p + "q": conv(q), p + "k": conv(call.key[0]), p + "probs": conv(call.probs[0])})
    if call.x is not None:
        out[p + "x"] = conv(call.x[0])
    if call.x_kv is not None:
        out[p + "x_kv"] = conv(call.x_kv[0])
    Tq, Tk = call.probs.shape[-2:]
    if call.lse is not None:
        pass  # the mask and any bias are in the score rule
    elif call.mask is None:
        out[p + "mask"] = _shared(masks, np.zeros((Tq, Tk), np.float32))
    else:
        seen = masks_by_tensor.get(id(call.mask))  # layers handed the same mask tensor: split it once
        if seen is None:
            blocked, bias = split_mask(call.mask)
            blocked = blocked_map(blocked, Tq, Tk)
            seen = masks_by_tensor[id(call.mask)] = (_shared(masks, blocked.cpu().numpy().astype(np.float32)),
                                                      bias if bool(bias.abs().max() > 0) else None)
        out[p + "mask"], bias = seen
        if bias is not None:
            b = bias[0]  # (1 | H, Tq, Tk)
            out[p + "bias"] = conv(b)
            facts.bias = True
    out.update({p + name: _weight(call.module, name, w) for name, w in reading.weights.items()})
    # a layer recorded on the fastest kernel keeps no attention output: Trace recomputes it from z, W_O and b_O
    # (keeping the model's own tensor alive made the capture fault in ~8 % more fresh pages than it keeps)
    derived_out = call.lse is not None and "W_o" in reading.weights and "b_o" in reading.weights
    if reading.out is not None and keep_out and not derived_out:
        out[p + "out"] = conv(reading.out)
    if reading.q_pre_rope is not None:
        out[p + "q_pre_rope"], out[p + "k_pre_rope"] = conv(reading.q_pre_rope), conv(reading.k_pre_rope)
        out[p + "rope_cos"], out[p + "rope_sin"] = conv(call.rope[0][0], np.float32), conv(call.rope[1][0], np.float32)
    if call.sinks is not None:
        out[p + "sinks"] = conv(call.sinks, np.float32)
    if block is not None and block.get("resid") is not None and block["resid"].shape[:2] != (1, Tq):
        block = None  # the block's stream is not over these positions (Swin's windows)
    if block is not None:
        if block.get("resid") is not None:
            out[p + "resid"] = conv(block["resid"][0])
        kind = kind_of(call) if memo is not None else None
        if block.get("h") is not None and (post_ln or _h_matches(block, reading.out, memo, kind)):
            out[p + "h"] = conv(block["h"][0])
    if call.lse is not None and RECOMPUTE and on_demand is not None and kept is not None:
        _as_rules(i, out, block, kept, on_demand.setdefault("recomputed", {}), reading.weights, memo,
                  kind_of(call) if memo is not None else None)
    return out, facts


def _rows_agree(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal to float32 rounding (a rule that is wrong is wrong by far more)."""
    if got.shape != want.shape or not np.all(np.isfinite(want)):
        return False
    return bool(np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max())))


def _as_rules(i: int, out: dict, block: dict | None, kept: dict, rules: dict, weights: dict | None = None,
              memo: CheckMemo | None = None, kind=None) -> None:
    """Move ``q_pre_rope``, ``k_pre_rope``, ``v`` and ``h`` of layer ``i`` out of ``out`` into ``rules``
    (``meta["recomputed"]``) where each one's rule reproduces it at three positions (first, middle, last) on
    the first layer of its kind (``memo``; later layers of that kind follow it unchecked); float32 arrays
    only (a float16 array recomputed would differ from the model's by its rounding)."""
    p = f"L{i}."

    def have(*names):
        return all(p + n in out and out[p + n].dtype == np.float32 for n in names)

    def move(name: str, rule: str, sources: list[str], check, memo_name: str | None = None, **extra) -> None:
        if p + name not in out:  # moved already (a rule tried in several forms)
            return
        arr = out[p + name]
        check_name = "rule " + (memo_name or name)
        ok = memo is not None and memo.get(kind, check_name) is not None
        if not ok:
            T = arr.shape[-2]
            pick = np.array(sorted({0, T // 2, T - 1}))
            try:
                ok = _rows_agree(check(pick), np.asarray(arr[..., pick, :]))
            except (ValueError, IndexError, KeyError):  # ingredients of another form (a model's own rotary layout)
                ok = False
            if ok and memo is not None:
                memo.remember(kind, check_name, True)
        if ok:
            rules[p + name] = describe_recomputed(rule, sources, arr.shape, arr.dtype, **extra)
            del out[p + name]

    unrotate = RECOMPUTE_KINDS["unrotated"][0]
    for name, src in (("q_pre_rope", "q"), ("k_pre_rope", "k")):
        if have(name, src, "rope_cos", "rope_sin"):
            move(name, "unrotated", [p + src, p + "rope_cos", p + "rope_sin"],
                 lambda pick, src=src: unrotate(out[p + src][:, pick], out[p + "rope_cos"][pick],
                                                out[p + "rope_sin"][pick]))
    if have("v", "x", "W_v", "b_v"):
        d_head = out[p + "v"].shape[-1]
        move("v", "projected", [p + "x", p + "W_v", p + "b_v"],
             lambda pick: RECOMPUTE_KINDS["projected"][0](out[p + "x"][pick], out[p + "W_v"], out[p + "b_v"], d_head),
             d_head=d_head)
    stream_key = "emb.sum" if i == 0 else f"L{i - 1}.resid"
    stream = block.get("stream") if block is not None else None
    if have("h", "z", "W_o", "b_o") and stream is not None and (i == 0 or stream_key in kept):
        def mid(pick):
            rows = _stream_rows(stream, kept[stream_key] if i > 0 else None, pick)
            # the same sum in torch: NumPy's BLAS threads woken between torch's took ~19 ms a layer here
            z = torch.from_numpy(np.ascontiguousarray(out[p + "z"][:, pick].transpose(1, 0, 2))).flatten(1)
            if weights is not None and "W_o" in weights and "b_o" in weights:  # the same weights as tensors: no copy
                w, b = weights["W_o"].float(), weights["b_o"].float()
            else:
                # copies: the views are read-only
                w, b = (torch.from_numpy(np.array(out[p + n])) for n in ("W_o", "b_o"))
            attn = z @ w + b  # (3, H·dh) · (H·dh, D)
            return rows + attn.numpy()
        # the first layer's stream is the embeddings', later ones the previous layer's output: each checked once
        move("h", "mid_stream", [stream_key, p + "z", p + "W_o", p + "b_o"], mid, memo_name="h" if i else "h0")
    if i > 0 and have("x") and stream is not None and stream_key in kept:
        _x_as_rule(p, out, block, stream_key, kept[stream_key], stream, have, move)


def _first_norm(block: dict | None):
    """(module, weight, bias or None, eps) of the block's first norm (:data:`X_INPUTS`), or None."""
    module = block.get("block") if block is not None else None
    children = dict(module.named_children()) if module is not None else {}
    norm = next((children[n] for n in X_INPUTS if n in children), None)
    w = getattr(norm, "weight", None)
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    if not isinstance(w, torch.Tensor) or w.ndim != 1 or not isinstance(eps, (int, float)):
        return None
    b = getattr(norm, "bias", None)
    return norm, w, (b if isinstance(b, torch.Tensor) else None), float(eps)


def _stream_rows(stream: torch.Tensor, kept_stream, pick: np.ndarray) -> np.ndarray:
    """Rows ``pick`` of the stream entering the block, checked against the previous layer's kept output (None:
    the first layer, whose stream is the embeddings') — a rule over ``resid`` must read the same numbers."""
    rows = stream[0][torch.from_numpy(pick)].float().numpy()
    if kept_stream is not None and not _rows_agree(np.asarray(kept_stream[pick]), rows):
        raise ValueError("the block's stream is not the previous layer's output")
    return rows


def _x_as_rule(p: str, out: dict, block: dict, stream_key: str, kept_stream: np.ndarray, stream: torch.Tensor,
               have, move) -> None:
    """``x`` as the block's first norm of the stream entering it (the previous layer's ``resid``), where that
    norm, as RMSNorm (w or Gemma's 1 + w) or LayerNorm with its own weights, reproduces it (checked like every
    rule); else ``x`` stays stored. The norm's weights are kept as views of the model's parameters."""
    found = _first_norm(block)
    if found is None:
        return
    norm, w, b, eps = found
    out[p + "norm_w"] = _weight(norm, "weight", w)
    if b is not None:
        out[p + "norm_b"] = _weight(norm, "bias", b)
    if not have("norm_w") or (b is not None and not have("norm_b")):
        out.pop(p + "norm_w"), out.pop(p + "norm_b", None)
        return
    def rows(pick):
        return _stream_rows(stream, kept_stream, pick)

    if b is not None:
        forms = [("layer_normed", [stream_key, p + "norm_w", p + "norm_b"], {})]
    else:
        forms = [("rms_normed", [stream_key, p + "norm_w"], {"offset": offset}) for offset in (0.0, 1.0)]
    for kind, sources, params in forms:
        fn = RECOMPUTE_KINDS[kind][0]
        args = [out[n] for n in sources[1:]]
        move("x", kind, sources, lambda pick: fn(rows(pick), *args, eps, *params.values()),
             memo_name=f"x {kind} {params.get('offset', '')}", eps=eps, **params)
        if p + "x" not in out:
            return
    out.pop(p + "norm_w"), out.pop(p + "norm_b", None)
