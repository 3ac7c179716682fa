"""Capture a Hugging Face encoder–decoder into the Trace layout of attnviz's own ``translate`` model.

One forward pass over (source, decoder tokens) with every attention call recorded through transformers'
AttentionInterface (:class:`attnviz.hf.attention_record.AttentionRecorder`, which runs the model's own
eager attention) and the streams and embeddings read by :class:`attnviz.hf.encdec_streams.StreamRecorder`.
Calls inside the encoder are ``enc.L{i}.*``; in the decoder a call whose keys and values come from the
encoder output (``key_value_states``) is ``L{i}.cross.*`` (with ``x_kv``), the other ``L{i}.*``.
An additive bias the model puts on the scores (T5's relative position bias, passed to the attention
function as ``position_bias``) is kept as ``{prefix}bias`` (H, Tq, Tk): probs = softmax(q kᵀ·scale +
mask + bias). ``next_probs`` (T, V) is the model's next-token distribution after every decoder position.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.capture.description import TraceDescription
from attnviz.capture.finish import backward_to_target, finish_trace, grad_array, storage_dtypes
from attnviz.capture.on_demand import ON_DEMAND_T
from attnviz.capture.trace import LARGE_T, Trace, layer_prefix
from attnviz.errors import ModelLoadError
from attnviz.hf.attention_record import AttentionRecorder, _bind
from attnviz.hf.deferred_softmax import DeferredSoftmax
from attnviz.hf.dtype_support import compute_dtype_of, stored_precision
from attnviz.hf.encdec_rule import RelativeTable, relative_table, seed_rule
from attnviz.hf.encdec_streams import StreamRecorder
from attnviz.hf.layer_arrays import call_arrays
from attnviz.hf.loader import quiet_transformers
from attnviz.hf.module_plan import module_plan
from attnviz.hf.check_memo import CheckMemo
from attnviz.hf.projections import read_projections
from attnviz.hf.tensor_numpy import TensorsToNumpy

__all__ = ["capture_encdec"]


class _BiasRecorder(AttentionRecorder):
    """The recorder, plus the ``position_bias`` an encoder–decoder hands its attention function (T5):
    the core keeps the mask, and T5 adds its relative position bias beside it, not inside it."""

    def _attention(self, module, query, key, value, mask, z, probs, args, kwargs, **fast) -> None:
        super()._attention(module, query, key, value, mask, z, probs, args, kwargs, **fast)
        bias = {**_bind(module, args), **kwargs}.get("position_bias") if args else kwargs.get("position_bias")
        self.calls[-1].bias = bias.detach() if isinstance(bias, torch.Tensor) else None


def _call_arrays(call, prefix: str, conv: TensorsToNumpy, keep_out: bool, grad: bool, masks: list,
                 masks_by_tensor: dict, on_demand: dict, table: RelativeTable | None, qk_dtype,
                 memo: CheckMemo | None = None) -> dict:
    """The arrays of one call under ``prefix`` (``enc.L{i}.``, ``L{i}.``, ``L{i}.cross.``): the generic
    capture's per-call arrays (:func:`attnviz.hf.layer_arrays.call_arrays`, keyed ``L0.``, renamed here),
    plus T5's ``position_bias`` added to the bias (eager), or its bucket table in the score rule (fast: the
    layer's rule goes into ``on_demand``, the trace's ``meta["on_demand"]``)."""
    reading = read_projections(call, None, None, memo)  # checked once per kind of layer (hf/check_memo.py)
    if reading.missing:  # never shown half-read: these families are tested whole
        raise ModelLoadError(f"{type(call.module).__name__}: attnviz could not read {'; '.join(reading.missing)}; "
                             "this version of transformers lays the model out differently")
    fast = call.lse is not None
    rel = seed_rule(call, masks_by_tensor, table) if fast else None
    rules: dict = {}
    arrays, _ = call_arrays(0, call, reading, None, conv, keep_out, False, masks, masks_by_tensor, qk_dtype=qk_dtype,
                            on_demand=rules, memo=memo)
    out = {prefix + k[len("L0."):]: v for k, v in arrays.items()}
    if fast:
        facts = rules["on_demand"]["L0."]
        if rel is not None:  # T5's relative bias: its table and bucket rule, never an (H, Tq, Tk) array
            out[prefix + "score_rel_table"], facts["rel_rule"] = rel.table, dict(rel.rule)
        on_demand[prefix] = facts
    elif call.bias is not None and bool(call.bias.any()):  # (1, H, Tq, Tk)
        bias = call.bias[0].float()
        if prefix + "bias" in out:  # a finite bias inside the mask too
            bias = bias + torch.as_tensor(out[prefix + "bias"], dtype=torch.float32)
        # not through conv: it caches by storage address, and this temporary's storage is freed after it
        out[prefix + "bias"] = bias.cpu().numpy().astype(conv.dtype)
    if grad:
        out[prefix + "grad"] = grad_array(call.probs, conv, conv.dtype)
    return out


_PART_NAMES = {"enc": "encoder self-attention", "self": "decoder self-attention", "cross": "cross-attention"}


def _parts(calls, enc_name: str, n_enc: int, n_dec: int) -> tuple[dict[str, list], list[str]]:
    """The recorded calls per part, and the parts whose calls did not all go through the attention
    interface (LED, FSMT, ProphetNet, LongT5's local encoder attention compute theirs inside the model)."""
    parts: dict[str, list] = {"enc": [], "cross": [], "self": []}
    for call in calls:
        part = "enc" if call.name.startswith(enc_name + ".") else ("cross" if call.cross else "self")
        parts[part].append(call)
    want = {"enc": n_enc, "cross": n_dec, "self": n_dec}
    return parts, [p for p in parts if len(parts[p]) != want[p]]


def _model_probs(model, inputs: dict, part: str, n: int, shape: tuple, arch: str) -> list[torch.Tensor]:
    """A part's probabilities as the model itself returns them (``output_attentions``), checked."""
    with torch.no_grad():
        res = model(input_ids=inputs["input_ids"], decoder_input_ids=inputs["decoder_input_ids"],
                    output_attentions=True, use_cache=False)
    got = {"enc": res.encoder_attentions, "self": res.decoder_attentions, "cross": res.cross_attentions}[part]
    if not got or len(got) != n or any(tuple(p.shape[-2:]) != shape or p.dim() != 4 for p in got):
        raise ModelLoadError(f"{arch} returns no token-by-token maps of its {_PART_NAMES[part]} that attnviz can "
                             "show (its attention is computed inside the model, not through the attention interface)")
    return [p.detach() for p in got]


def _embeddings(emb: dict, stream0: torch.Tensor, base: str, conv: TensorsToNumpy, T: int) -> dict:
    out = {f"{base}emb.sum": conv(stream0[0])}  # the stream entering layer 0 (after an embedding LayerNorm)
    for name in ("token", "pos"):
        t = emb.get(name)
        if t is not None and t.shape[-2] == T:
            out[f"{base}emb.{name}"] = conv(t.reshape(-1, T, t.shape[-1])[0])
    if "pos_table" in emb:
        out[f"{base}emb.pos_table"] = conv(emb["pos_table"], np.float32)
    return out


def capture_encdec(model, inputs: dict, tokens: list[str], meta: dict | None = None, grad: bool = False,
                   target: int | None = None, precision: str = "auto", attention: str = "auto") -> Trace:
    """One forward pass of (``input_ids``, ``decoder_input_ids``), batch of one → Trace.

    ``tokens`` label the decoder positions (the runtime adds ``src_tokens``); ``grad`` records
    d(logit of ``target``, default the top token, after the last position)/d(probs) as ``*.grad``.
    ``attention``: "eager" (the model's own eager attention, every map kept), "on_demand" (the fastest kernel: each
    call keeps q, k, each row's log-sum-exp and its score rule, T5's bias as its bucket table; probabilities are
    recomputed exactly when asked, :meth:`Trace.probs`) or "auto" (on demand when the source or the decoder input
    has :data:`~attnviz.capture.on_demand.ON_DEMAND_T` tokens or more). Gradients need eager.
    """
    cfg = model.cfg
    arch = (getattr(model.config, "architectures", None) or [type(model).__name__])[0]
    names = module_plan(model).names  # kept per model (hf/module_plan.py): a walk of its own cost ~0.5 ms a capture
    enc_name = names[id(model.get_encoder())]
    T_dec, T_enc = inputs["decoder_input_ids"].shape[1], inputs["input_ids"].shape[1]
    large = max(T_dec, T_enc) > LARGE_T
    if attention not in ("auto", "eager", "on_demand"):
        raise ValueError(f"attention must be 'auto', 'eager' or 'on_demand', not {attention!r}")
    fast = not grad and (attention == "on_demand" or (attention == "auto" and max(T_dec, T_enc) >= ON_DEMAND_T))
    dtype, qk_dtype = storage_dtypes(precision, max(T_dec, T_enc), on_demand=fast)
    conv = TensorsToNumpy(dtype)
    import transformers

    # quiet: transformers logs a line per module it cannot switch to the recording function (FSMT, LED, …);
    # the trace's notice says what that means, once
    with quiet_transformers(transformers), StreamRecorder(model) as streams, \
            _BiasRecorder(model, keep_grad=grad, fast=fast) as rec, torch.set_grad_enabled(grad):
        logits = model(input_ids=inputs["input_ids"], decoder_input_ids=inputs["decoder_input_ids"],
                       use_cache=False).logits  # (1, T_dec, V)
        if grad:
            for c in rec.calls:
                c.probs.retain_grad()
            backward_to_target(model, logits, target)
    parts, unread = _parts(rec.calls, enc_name, cfg.n_layers, cfg.dec_layers)
    scales = {round(c.scaling, 12) for c in rec.calls} or {cfg.head_dim**-0.5}  # none read: the usual one
    if len(scales) != 1:  # Trace rebuilds logits with one scale
        raise ModelLoadError(f"{arch} scales its attention parts differently ({sorted(scales)}); attnviz "
                             "shows models with one softmax scale")
    notices: list[str] = []  # after the input's own notice (finish_trace)
    arrays: dict[str, np.ndarray] = {}
    masks, masks_by_tensor = [], {}  # one array per distinct mask, each mask tensor split once
    on_demand: dict[str, dict] = {}  # prefix → score rule facts of each fast-recorded call
    tables = {"enc": relative_table(model.get_encoder()), "self": relative_table(model.get_decoder()), "cross": None}
    memo = CheckMemo()
    with torch.no_grad():
        for part, calls in parts.items():
            if part in unread:  # probabilities only, as the model returns them
                n = cfg.n_layers if part == "enc" else cfg.dec_layers
                shape = (T_enc if part == "enc" else T_dec, T_enc if part != "self" else T_dec)
                for i, p in enumerate(_model_probs(model, inputs, part, n, shape, arch)):
                    arrays[layer_prefix(i, part) + "probs"] = conv(p[0])
                continue
            for i, call in enumerate(calls):
                arrays.update(_call_arrays(call, layer_prefix(i, part), conv, not large, grad, masks,
                                           masks_by_tensor, on_demand, tables[part], qk_dtype, memo))
        for part, base in (("enc", "enc."), ("self", "")):
            layers = streams.layer_records(part)
            if not layers:  # a stack laid out otherwise: no streams, no embeddings (said below)
                notices.append(f"{arch}: attnviz cannot read the residual stream of its {_PART_NAMES[part]}")
                continue
            for i, r in enumerate(layers):
                arrays[f"{base}L{i}.resid"] = conv(r["resid"][0])
                if "h" in r:
                    arrays[f"{base}L{i}.h"] = conv(r["h"][0])
            if any("h" not in r for r in layers):
                notices.append(f"{arch}: attnviz cannot read the stream after the self-attention sub-layer "
                               "(L.h) of this layout")
            arrays.update(_embeddings(streams.embeddings(part), layers[0]["stream"], base, conv,
                                      T_enc if part == "enc" else T_dec))
        # (T_dec, V): the softmax runs for the rows asked for; the last position's is the prediction
        deferred = {"next_probs": DeferredSoftmax(logits[0], dtype)}
        arrays["prediction"] = deferred["next_probs"].row(-1)
    kv_heads = int(rec.calls[0].key.shape[1]) if rec.calls else cfg.n_heads
    from attnviz.hf.describe import EMB_SUM, true_config  # the model's real activation and norm names
    missing = ([f"x, q, k, v, z, W_O of the {', '.join(_PART_NAMES[p] for p in unread)} "
                "(computed inside the model, not through the attention interface)"] if unread else [])
    if missing:  # said in one line, as the generic capture says it
        notices.append(f"{arch}: not captured: " + "; ".join(missing))
    description = TraceDescription(
        kind="encoder-decoder", config=true_config(model.config, cfg), scale=float(scales.pop()), causal=True,
        n_layers=cfg.dec_layers, n_enc_layers=cfg.n_layers, n_heads=cfg.n_heads, n_kv_heads=kv_heads,
        d_head=cfg.head_dim, precision=stored_precision(dtype, compute_dtype_of(model)),
        compute_dtype=compute_dtype_of(model), source="huggingface", hf_architecture=arch,
        hf_family=str(getattr(model.config, "model_type", "")), qkv_available=not unread, prefix_tokens=0,
        position=cfg.pos, missing=tuple(missing), on_demand=on_demand or None,
        # T5: softmax(q kᵀ·scale + mask + bias)
        additive_bias=True if any(k.endswith((".bias", ".score_rel_table")) for k in arrays) else None,
        emb_sum=EMB_SUM)
    return finish_trace(tokens, arrays, description, meta, notices=notices, deferred=deferred)
