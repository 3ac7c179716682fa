"""Capture a Hugging Face model's attention into the same :class:`~attnviz.capture.Trace` as attnviz's own models.

Every family whose attention goes through transformers' attention interface is read generically
(:mod:`attnviz.hf.attention_record`): the model runs once on attnviz's registered attention function,
which calls the model's own eager attention and keeps its inputs and outputs; the projections are read
and checked against them (:mod:`attnviz.hf.projections`), the residual stream around each block by
:mod:`attnviz.hf.block_record`. A part that cannot be read is left out and named in ``meta["missing"]``
and in one line of the notice. Falcon, Bloom, GPT-Neo and DeBERTa-v2 compute attention themselves: forward
hooks on their public submodules read the same parts (:mod:`attnviz.hf.own_attention`). Other such families
give the probabilities they return with ``output_attentions`` and say so.
"""

from __future__ import annotations

import dataclasses
import inspect
from contextlib import contextmanager

import numpy as np
import torch

from attnviz.capture.finish import backward_to_target, finish_trace, grad_array, storage_dtypes
from attnviz.capture.on_demand import ON_DEMAND_T, OnDemandProbs
from attnviz.capture.preview import LayerPreview
from attnviz.capture.compute_dtype import array_bytes
from attnviz.capture.spill import SpillStore, capture_budget
from attnviz.hf.allocator import keep_freed_memory
from attnviz.hf.held_memory import held_besides_weights
from attnviz.capture.trace import Trace
from attnviz.errors import InputError, ModelLoadError
from attnviz.hf.attention_record import AttentionRecorder, blocked_map, split_mask
from attnviz.hf.block_record import BlockRecorder
from attnviz.hf.describe import EMB_SUM, describe_model, head_of, trace_description
from attnviz.hf.dtype_support import compute_dtype_of, stored_precision
from attnviz.hf.embeddings import embedding_arrays, embedding_hooks
from attnviz.hf.families import family_of
from attnviz.hf.layer_convert import LayerConverter
from attnviz.hf.output_head import DeferredPrediction, OutputHead
from attnviz.hf.own_attention import OwnAttentionRecorder
from attnviz.hf.own_attention_fast import OwnAttentionFastRecorder, on_demand_possible
from attnviz.hf.private_names import attn_implementation
from attnviz.hf.score_rule import rule_of
from attnviz.hf.tensor_numpy import TensorsToNumpy as _Numpy
from attnviz.models.memory import forward_bytes, on_demand_trace_bytes

__all__ = ["capture_hf", "eager_attention", "ON_DEMAND_T", "MAX_FULL_T"]

# families computing attention in their own code whose scores no rule states (DeBERTa) keep full maps up to this
MAX_FULL_T = 2048
# a live preview of a fast-recorded layer is computed whole only up to this many (head × query × key) cells;
# a longer one carries q, k and lse and is pooled where it is drawn
PREVIEW_CELLS = 1 << 24


@contextmanager
def eager_attention(model):
    """Run ``model`` on transformers' eager attention in eval mode; restore both afterwards."""
    before = attn_implementation(model.config)
    was_training = model.training
    # a loaded model is in eval mode already: switching every module to eval and back took ~3 ms a run
    switch = any(m.training for m in model.modules())
    if before != "eager":
        model.set_attn_implementation("eager")
    if switch:
        model.eval()
    try:
        yield
    finally:
        if before != "eager":
            model.set_attn_implementation(before)
        if switch:
            model.train(was_training)


def _prediction(logits, head: str) -> np.ndarray | None:
    if logits is None or head == "none" or logits.dim() not in (2, 3):
        return None
    probs = torch.softmax(logits.detach().float(), dim=-1)[0]
    return (probs[-1] if head == "lm" else probs).cpu().numpy()  # (V,) next token, (C,) or (T, C)


def _probs_only(model, inputs: dict, arch: str):
    """(logits, probabilities per layer) from the model's own ``output_attentions`` on eager attention."""
    with eager_attention(model):
        try:
            out = model(**inputs, output_attentions=True)
        except Exception as exc:  # a family may want inputs attnviz does not make
            raise ModelLoadError(f"{arch} cannot run on this input: {str(exc).strip()[:200]}") from None
    return getattr(out, "logits", None), list(getattr(out, "attentions", None) or [])


def _square(probs_list, arch: str) -> None:
    if not probs_list or any(p.dim() != 4 or p.shape[-1] != p.shape[-2] for p in probs_list) \
            or len({p.shape[-1] for p in probs_list}) != 1:
        raise ModelLoadError(f"{arch} returns no token-by-token attention maps attnviz can show "
                             "(its attention is not one square map per layer over the input's positions)")


def _windowed(calls: list, arch: str) -> tuple[list, str | None]:
    """The calls a trace can show, and what it leaves out. A model that attends inside windows (Swin: a
    batch of windows per call, other head counts in later stages) is shown as its first stage's blocks,
    each in its first window (batch row 0): one square map per layer over the same number of positions."""
    if all(c.probs.shape[0] == 1 for c in calls) and len({c.probs.shape[1:] for c in calls}) == 1:
        return calls, None
    first = calls[0].probs.shape
    shown = []
    for c in calls:
        if c.probs.shape[1:] != first[1:]:
            break
        shown.append(c)
    side = int(round(first[-1] ** 0.5))
    return shown, (f"{arch} attends inside windows of {side}×{side} patches ({first[0]} windows in its first "
                   f"stage, shifted by half a window in every other block): shown are the {len(shown)} blocks of the "
                   f"first stage, each inside its first window (positions r,c within the window); the other "
                   f"windows and the {len(calls) - len(shown)} blocks of later stages are not shown")


def _long_input_kwargs(model, head: str) -> dict:
    """What a long capture asks of the forward beyond the input: a language model's logits at the last position
    only (the trace's prediction is that row; all positions were a (T, V) array, 1.6 GB at 8,192 tokens of a
    49,152-word vocabulary, softmaxed once more) and no key/value cache (nothing decodes after a capture)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return {}
    extra = {"use_cache": False} if "use_cache" in params else {}
    if head == "lm" and "logits_to_keep" in params:
        extra["logits_to_keep"] = 1
    return extra


def _wanted(layers):
    if layers is None:
        return None
    keep = {int(i) for i in layers}

    def want(name: str) -> bool:
        parts = [p for p in name.split(".") if p.isdigit()]
        return bool(parts) and int(parts[-1]) in keep
    return want


def _layer_reporter(preview, only, tokens, n_layers: int):
    """The recorder's ``on_call`` for ``preview(LayerPreview)``: one call per layer in call order (``only``: those
    indices alone, the others are not copied); a model attending inside a batch of windows (Swin) reports
    nothing."""
    only = None if only is None else {int(i) for i in only}
    tokens = tuple(tokens)

    def report(call, probs, mask):
        fast = probs is None and call.lse is not None and call.lse.shape[0] == 1 and (only is None or call.index in only)
        if fast and call.lse.numel() * call.key.shape[-2] > PREVIEW_CELLS:
            # too long to compute whole here: copies of q, k and lse (O(T·d)); the head map pools the blocks it
            # needs off the forward's thread, as it does a long trace's
            q, k, lse = (np.array(t[0].detach().float().cpu().numpy(), np.float32, copy=True)
                         for t in (call.query, call.key, call.lse))
            preview(LayerPreview(call.index, n_layers, None, tokens,
                                 deferred=OnDemandProbs(q, k, lse, rule_of(call, call.scaling, {}))))
            return
        if fast:
            # a fast-recorded layer: its probabilities recomputed from q, k and lse (short enough to preview)
            rule = rule_of(call, call.scaling, {})
            probs = torch.from_numpy(OnDemandProbs(call.query[0].float().numpy(), call.key[0].float().numpy(),
                                                   call.lse[0].numpy(), rule).full())[None]
            mask = None if rule.blocked_bits is None and not rule.causal and rule.window is None else \
                torch.from_numpy(np.where(rule.blocked(np.arange(probs.shape[2]), np.arange(probs.shape[3]),
                                                       probs.shape[3]), float("-inf"), 0.0))
        if probs is not None and probs.shape[0] == 1 and (only is None or call.index in only):
            # copies: nothing the forward does afterwards can change what was reported
            p = np.array(probs[0].detach().float().cpu().numpy(), dtype=np.float32, copy=True)
            masked = None
            if isinstance(mask, torch.Tensor):
                masked = torch.isneginf(blocked_map(split_mask(mask.detach())[0], *p.shape[1:])).cpu().numpy()
            preview(LayerPreview(call.index, n_layers, p, tokens, masked))
    return report


def _long_store(model, cfg, T: int) -> tuple[SpillStore, int]:
    """(the store of a long capture's arrays, the bytes kept up to which it does not trim the allocator): the
    budget leaves room for the model's own forward and what the process holds; a trace expected to fit whole
    stays in memory untrimmed (``LayerConverter``'s ``untrimmed``). The allocator's thresholds are fixed first
    (:func:`attnviz.hf.allocator.keep_freed_memory`)."""
    keep_freed_memory()
    element = array_bytes(compute_dtype_of(model))
    whole = on_demand_trace_bytes(cfg, T, element)
    budget = capture_budget(forward_bytes(cfg.d_model, cfg.mlp_ratio, T, element),
                            held_bytes=held_besides_weights(model), whole_bytes=whole)
    return SpillStore(budget), (whole if whole <= budget else 0)


def capture_hf(model, inputs: dict, tokens: list[str], meta: dict | None = None, grad: bool = False,
               target: int | None = None, precision: str = "auto", layers=None, preview=None,
               preview_layers=None, attention: str = "auto") -> Trace:
    """One forward pass of a batch-of-one input; same arguments and result as :func:`attnviz.capture.capture`.

    Parameters
    ----------
    model : a ``transformers`` model (loaded by :func:`attnviz.hf.loader.load_hf_model`, which sets
        ``model.cfg``, the attnviz :class:`~attnviz.models.config.ModelConfig` describing it).
    inputs : keyword arguments of the model (``input_ids`` or ``pixel_values``), batch size 1.
    tokens : labels of the positions.
    grad : also record d(target logit)/d(probs) as ``L{i}.grad``.
    precision : "float32", "float16" or "auto" (float16 and derived arrays dropped above 512 tokens).
    layers : layer indices kept in full (default all); the others keep their probabilities only.
    preview : ``preview(LayerPreview)`` called during the forward as soon as a layer's attention is computed
        (:class:`~attnviz.capture.preview.LayerPreview`: a float32 copy of the model's own probabilities and
        the cells its mask blocked, or for a long layer copies of its q, k and lse); models read through the
        attention interface only (the others report nothing before the trace is complete).
    preview_layers : the layer indices ``preview`` is called for (default all).
    attention : "eager" (the model's own eager attention, probabilities kept as computed), "on_demand" (the
        fastest kernel; each layer keeps q, k and each row's log-sum-exp and its probabilities are recomputed
        exactly when asked: :meth:`Trace.probs`) or "auto" (on demand from :data:`ON_DEMAND_T` tokens).
        Gradients need eager. A live preview of an on-demand layer carries its probabilities up to
        ``PREVIEW_CELLS`` cells, above that q, k and lse (``LayerPreview.deferred``).
    """
    hf_cfg = model.config
    arch = (getattr(hf_cfg, "architectures", None) or [type(model).__name__])[0]
    cfg = getattr(model, "cfg", None) or describe_model(hf_cfg, arch)
    family = family_of(hf_cfg.model_type)
    notices: list[str] = []  # after the input's own notice (finish_trace)
    T = len(tokens)
    if attention not in ("auto", "eager", "on_demand"):
        raise ValueError(f"attention must be 'auto', 'eager' or 'on_demand', not {attention!r}")
    fast = not grad and (attention == "on_demand" or (attention == "auto" and T >= ON_DEMAND_T))
    # an on-demand capture keeps numpy views of the model's own tensors (alive until the end anyway)
    dtype, qk_dtype = storage_dtypes(precision, T, on_demand=fast)
    conv, head, deferred = _Numpy(dtype), head_of(arch), {}
    recorder = AttentionRecorder(model, keep=_wanted(layers), keep_grad=grad, fast=fast,
                                 probs_dtype=torch.float16 if dtype == np.float16 else None)
    generic = bool(recorder.modules)
    if preview is not None:
        recorder.on_call = _layer_reporter(preview, preview_layers, tokens, cfg.n_layers)
    own, own_fast = None, False
    if not generic:  # (its walk over every module is ~10 ms a capture: only for the families that need it)
        own = OwnAttentionRecorder(model, keep=_wanted(layers), keep_grad=grad,
                                   probs_dtype=torch.float16 if dtype == np.float16 else None)
        own_fast = fast and on_demand_possible(own.modules)  # Falcon, Bloom, GPT-Neo: q, k, lse, rule
        if own_fast:
            own = OwnAttentionFastRecorder(model, keep=_wanted(layers))
    calls, blocks, emb, windows = [], None, {}, None
    if not generic and not own_fast and T > MAX_FULL_T:  # before the forward: (H, T, T) maps would not fit
        why = "terms attnviz cannot recompute from q and k" if own.modules else "attnviz reads only the maps it returns"
        raise InputError(f"{arch} computes attention in its own code ({why}): "
                         f"its full (heads, T, T) maps are kept, up to {MAX_FULL_T:,} tokens (this input has {T:,})")
    # a long capture on the fastest kernel converts each layer as soon as its block has run, keeping arrays on
    # disk beyond a memory budget (attnviz.capture.spill); others convert after the forward, in memory
    # (the in-memory budget: what the resident goal leaves beside the forward's own peak at this length)
    spill, untrimmed = _long_store(model, cfg, T) if fast and generic else (None, 0)
    layers_out = LayerConverter(conv, qk_dtype, post_ln=family is not None and family.norm == "post", spill=spill,
                                untrimmed=untrimmed)
    with torch.set_grad_enabled(grad), OutputHead(model, head, enabled=not grad) as output_head:
        if generic:
            post_h = family.h if family is not None and family.norm == "post" else None
            with recorder, BlockRecorder(model, recorder.modules, recorder.calls, post_h,
                                         on_end=layers_out.finish_block, plan=recorder.plan) as blocks, \
                    embedding_hooks(model, family, emb):
                layers_out.blocks, layers_out.calls = blocks, recorder.calls
                out = model(**inputs, **(_long_input_kwargs(model, head) if spill is not None else {}))
            calls, windows = _windowed(recorder.calls, arch)
            if windows:
                notices.append(windows)
            logits, probs_list = getattr(out, "logits", None), [c.probs for c in calls]
        elif own is not None and own.modules:  # Falcon, Bloom, GPT-Neo, DeBERTa-v2: read by hooks on their public submodules
            with own, BlockRecorder(model, own.modules, own.calls) as blocks, embedding_hooks(model, family, emb):
                if own_fast:  # the model's own forward, no maps returned; each call's lse from q, k and its rule
                    with eager_attention(model):
                        logits = getattr(model(**inputs), "logits", None)
                    probs_list = [c.probs for c in own.calls]
                else:
                    logits, probs_list = _probs_only(model, inputs, arch)
            if len(own.calls) == len(probs_list):
                calls, probs_list = own.calls, [c.probs for c in own.calls]
                generic = True
            if own.failed:
                notices.append(f"{arch}: the arrays of {len(own.failed)} attention call(s) did not reproduce the "
                               "model's probabilities; those layers show probabilities only")
        else:
            logits, probs_list = _probs_only(model, inputs, arch)
        _square(probs_list, arch)
        if grad and logits is not None:
            for p in probs_list:
                p.retain_grad()
            backward_to_target(model, logits, target)
    with torch.no_grad():
        T_run = probs_list[0].shape[-1]
        layers_out.blocks = blocks
        for i, call in enumerate(calls):
            layers_out.convert(i, call)
        arrays, facts = layers_out.arrays, [layers_out.facts[i] for i in range(len(calls))]
        on_demand = layers_out.on_demand
        if not generic:  # the description's missing line says what is not there
            arrays.update({f"L{i}.probs": conv(p[0]) for i, p in enumerate(probs_list)})
        elif calls and calls[0].kept:
            arrays.update(embedding_arrays(model, family, emb, blocks, conv, T_run))
        if grad:
            for i, p in enumerate(probs_list):
                arrays[f"L{i}.grad"] = grad_array(p, conv, dtype)
        pred = output_head.prediction(logits, dtype, lambda lg: _prediction(lg, head))
        if isinstance(pred, DeferredPrediction) and pred.surely_finite():
            deferred["prediction"] = pred  # computed per row when shown (hf/output_head.py)
        elif pred is not None:
            pred = pred.full() if isinstance(pred, DeferredPrediction) else pred
            arrays["prediction"] = pred.astype(dtype, copy=False)
    if spill is not None:
        spill.flush()  # the layers' writes (on the store's writer thread) done: arrays are their maps
    grid = list(cfg.grid) if cfg.kind == "vit" else None
    if generic and windows:  # positions inside one window
        side = int(round(T_run ** 0.5))
        tokens, grid = ([f"{r},{c}" for r in range(side) for c in range(side)] if side * side == T_run
                        else [str(i) for i in range(T_run)]), None
    elif T_run != T:  # a family whose positions attnviz cannot name in advance
        tokens, grid = [str(i) for i in range(T_run)], None
    n_prefix = len(family.prefix) if family is not None else (1 if grid else 0)
    described = trace_description(hf_cfg, cfg, facts, probs_list, generic)
    compute = compute_dtype_of(model)  # probabilities come back in its precision (attnviz.capture.compute_dtype)
    if described.missing:
        notices.append(f"{arch}: not captured: " + "; ".join(described.missing))
    description = dataclasses.replace(
        described, kind=cfg.kind, causal=cfg.kind == "decoder", n_layers=len(probs_list), n_enc_layers=0,
        d_head=cfg.head_dim, grid=tuple(grid) if grid else None, precision=stored_precision(dtype, compute),
        compute_dtype=compute,
        source="huggingface", hf_architecture=arch, hf_family=family.name if family else hf_cfg.model_type,
        prefix_tokens=n_prefix, on_demand=on_demand.get("on_demand") or None,
        recomputed=on_demand.get("recomputed") or None,
        emb_sum=EMB_SUM)
    return finish_trace(tokens, arrays, description, meta, notices=notices, deferred=deferred, spill=spill)
