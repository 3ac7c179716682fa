"""Record every attention call of a Hugging Face model through transformers' AttentionInterface (Qt-free).

transformers 5 routes the attention of nearly every family through one function looked up by name in
``ALL_ATTENTION_FUNCTIONS`` (``config._attn_implementation``). :func:`register` adds ours under
:data:`ATTN_NAME` (``AttentionInterface.register``, with ``AttentionMaskInterface.register`` so that
``masking_utils`` builds the same additive float masks as for "eager"). Our function runs the model's
*own* eager function (``eager_attention_forward`` of the module's modeling file, so Gemma 2's soft-cap,
sinks etc. are computed exactly as transformers does) and keeps its inputs and outputs.

API
---
``with AttentionRecorder(model) as rec: out = model(**inputs)`` switches the model (and its sub-models)
to :data:`ATTN_NAME` with ``set_attn_implementation`` and evaluation mode, and restores both on exit, also
after an exception. ``rec.calls`` is a list of :class:`AttentionCall`, one per call of the attention
function, in call order. Each holds (batch dimension kept, tensors detached unless ``keep_grad``):

- ``module``, ``name`` (qualified name in ``model.named_modules()``, e.g. ``model.layers.3.self_attn``,
  ``decoder.block.0.layer.1.EncDecAttention``), ``layer`` (``module.layer_idx`` when the module has
  one, else None), ``index`` (position in the call order);
- ``x``: the attention module's input ``hidden_states`` (B, Tq, D), read by a forward pre-hook;
  ``x_kv``: the ``key_value_states`` / ``encoder_hidden_states`` it was given (cross-attention), or None;
- ``rope``: ``(cos, sin)`` the module received as ``position_embeddings`` (rotary models), or None;
- ``proj``: ``{child name: (input, output)}`` of the module's direct children whose output is a tensor
  (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``, GPT-2's fused ``c_attn``, Qwen 3's ``q_norm`` …): the
  queries and keys *before* rotation are the q/k projections' (or per-head norms') outputs;
- ``query`` (B, H, Tq, dh) after rotation, ``key`` and ``value`` (B, H_kv, Tk, dh) as the model stores
  them (grouped-query attention: before ``repeat_kv``; query head h reads key/value head h // (H/H_kv));
- ``mask``: the additive mask as passed (B|1, 1|H, Tq, Tk), or None; a relative position bias that a
  model adds to the mask (T5) is inside it: :func:`split_mask` separates −inf from the finite bias;
- ``scaling``, ``softcap``, ``sliding_window``, ``dropout`` (keyword arguments of the call), ``sinks``
  (the module's ``sinks`` parameter, GPT-OSS), ``probs`` (B, H, Tq, Tk) and ``z`` (B, Tq, H, dh), the
  function's two results, exactly what transformers' eager path returns.

Cross-attention calls appear like self-attention ones, in call order, with ``x_kv`` set and
``key``/``value``/``probs`` over the encoder length Tk (``call.cross`` is True when Tk differs from Tq
or ``x_kv`` is given). A call is matched to its layer by ``module`` (identity) or ``name``; a shared
module (ALBERT) appears once per call. ``keep`` (a predicate on the call's ``name``) drops the tensors
of calls that are not wanted except ``probs`` (stored in ``probs_dtype`` when given, e.g. float16), to hold
only the asked-for layers in full. ``on_call(call, probs, mask)``, when set, is called as soon as a call is
recorded, still inside the forward, with the probabilities and mask exactly as the model had them (a live preview).
"""

from __future__ import annotations

import contextvars
import inspect
import sys
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from attnviz.capture.attention_kernel import attention_with_lse
from attnviz.hf.module_plan import module_plan
from attnviz.hf.private_names import attn_implementation
from attnviz.hf.score_rule import tensor_key

__all__ = ["ATTN_NAME", "ATTN_FAST", "AttentionCall", "AttentionRecorder", "register", "split_mask", "blocked_map",
           "is_attention_module", "uses_attention_interface"]

ATTN_NAME = "attnviz_record"
# the same recording on the fastest kernel: the output and each row's log-sum-exp, no (Tq, Tk) probabilities
ATTN_FAST = "attnviz_fast"
# the recorders whose model is running in this thread / task (the innermost last): per capture, never
# module-global, so two captures in one process (two threads) never see each other's calls
_ACTIVE: contextvars.ContextVar[tuple] = contextvars.ContextVar("attnviz_recorders", default=())
_CLASS_USES: dict[type, bool] = {}


@dataclass
class AttentionCall:
    """One call of the attention function (see the module docstring for every field)."""

    module: nn.Module
    name: str
    index: int
    layer: int | None = None
    x: torch.Tensor | None = None
    x_kv: torch.Tensor | None = None
    rope: tuple | None = None
    proj: dict = field(default_factory=dict)
    query: torch.Tensor | None = None
    key: torch.Tensor | None = None
    value: torch.Tensor | None = None
    mask: torch.Tensor | None = None
    scaling: float | None = None
    softcap: float | None = None
    sliding_window: int | None = None
    dropout: float = 0.0
    sinks: torch.Tensor | None = None
    probs: torch.Tensor | None = None
    z: torch.Tensor | None = None
    kept: bool = True
    lse: torch.Tensor | None = None  # (B, H, Tq) float32 each row's log-sum-exp (fast recording; probs is then
    # a shape-only "meta" tensor and the probabilities are recomputed on demand from query, key and lse)
    is_causal: bool = False  # the kernel applied the causal rule itself (mask None)
    columns: dict | None = None  # {"q"|"k"|"v": (child name, column indices)} a family adapter knows

    @property
    def cross(self) -> bool:
        if self.x_kv is not None:
            return True
        return self.key is not None and self.query is not None and self.key.shape[-2] != self.query.shape[-2]


def uses_attention_interface(cls: type) -> bool:
    """Whether a module class's ``forward`` looks its attention up in ALL_ATTENTION_FUNCTIONS (by the
    names its code refers to: no source is read, nothing is called)."""
    hit = _CLASS_USES.get(cls)
    if hit is None:
        forward = getattr(cls, "forward", None)
        code = getattr(inspect.unwrap(forward), "__code__", None) if forward is not None else None
        hit = _CLASS_USES[cls] = code is not None and "ALL_ATTENTION_FUNCTIONS" in code.co_names
    return hit


def is_attention_module(module: nn.Module) -> bool:
    return uses_attention_interface(type(module))


def _eager_of(module: nn.Module):
    """The eager attention function of the module's own modeling file (None: use :func:`_generic_eager`)."""
    return getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)


def _generic_eager(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **_):
    """transformers' eager attention for modules whose file has none of its own (same operations)."""
    groups = query.shape[1] // key.shape[1]
    key = key.repeat_interleave(groups, dim=1)
    value = value.repeat_interleave(groups, dim=1)
    scores = torch.matmul(query, key.transpose(2, 3)) * (query.shape[-1] ** -0.5 if scaling is None else scaling)
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if attention_mask is not None:
        scores = scores + attention_mask
    probs = nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    probs = nn.functional.dropout(probs, p=dropout, training=module.training)
    return torch.matmul(probs, value).transpose(1, 2).contiguous(), probs


def _record_attention(module, query, key, value, attention_mask, *args, **kwargs):
    """The function registered under ATTN_NAME: the model's eager attention, its inputs and outputs kept."""
    eager = _eager_of(module) or _generic_eager
    z, probs = eager(module, query, key, value, attention_mask, *args, **kwargs)
    active = _ACTIVE.get()
    if active:
        active[-1]._attention(module, query, key, value, attention_mask, z, probs, args, kwargs)
    return z, probs


def _record_fast(module, query, key, value, attention_mask, *args, **kwargs):
    """The function registered under ATTN_FAST: attention on the CPU flash kernel (or its chunked fallback,
    :mod:`attnviz.capture.attention_kernel`), recording each row's log-sum-exp instead of T×T probabilities.
    The causal rule and masks are those transformers' SDPA path applies (``sdpa_attention_forward``)."""
    if args:
        kwargs = {**_bind(module, args), **kwargs}
    scaling = kwargs.get("scaling")
    scale = float(scaling) if scaling is not None else query.shape[-1] ** -0.5
    is_causal = kwargs.get("is_causal")
    is_causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    is_causal = bool(query.shape[2] > 1 and attention_mask is None and is_causal)
    mask = attention_mask
    active = _ACTIVE.get()
    bias = kwargs.get("position_bias")
    kernel_mask, kernel_causal = mask, is_causal
    if isinstance(bias, torch.Tensor):  # T5-style: the bias joins the mask as additive scores
        mask = bias if mask is None else (torch.where(mask, bias, float("-inf")) if mask.dtype == torch.bool
                                          else bias + mask)
        kernel_mask, kernel_causal = _dense_bias_mask(active, mask, is_causal)
    sinks = getattr(module, "sinks", None)
    sinks = sinks.detach() if isinstance(sinks, torch.Tensor) else None
    out, lse = attention_with_lse(query, key, value, scale, kernel_causal, kernel_mask, kwargs.get("softcap") or None,
                                  sinks, float(kwargs.get("dropout") or 0.0) if module.training else 0.0)
    z = out.transpose(1, 2).contiguous()  # (B, H, Tq, dh) → (B, Tq, H, dh) as eager returns it
    if active:
        kwargs["scaling"] = scale
        active[-1]._attention(module, query, key, value, mask, z, None, (), kwargs, lse=lse, is_causal=is_causal)
    return z, None


def _dense_bias_mask(active: tuple, mask: torch.Tensor, is_causal: bool) -> tuple[torch.Tensor, bool]:
    """(mask, is_causal) for the kernel from a bias mask: contiguous, the causal rule folded in, made once for the
    calls that hand the same storage.

    T5 hands every layer of a stack one permuted (1, H, T, T) bias (a new view each call); the CPU kernel reads a
    strided mask at about half its speed, and the model's own SDPA path copies it in every layer. One slot of the
    running recorder keeps the last copy while the next call hands the same storage (a stack's layers follow one
    another; the decoder's cross-attention bias is contiguous already), so at most one copy lives at a time."""
    if not active or mask.dtype == torch.bool or (mask.is_contiguous() and not is_causal):
        return mask, is_causal
    recorder = active[-1]
    key = (tensor_key(mask), is_causal)
    slot = getattr(recorder, "_kernel_mask", None)
    if slot is None or slot[0] != key:
        m = mask
        if is_causal:  # the kernel takes a mask or the causal flag: the flag folded into the mask
            tq, tk = m.shape[-2:]
            later = torch.arange(tk, device=m.device)[None, :] > torch.arange(tq, device=m.device)[:, None]
            m = m.masked_fill(later, float("-inf"))
        # the source is held too: while it lives no other tensor can take its address (and so its key)
        slot = recorder._kernel_mask = (key, m.contiguous(), mask)
    return slot[1], False


def _bind(module, args) -> dict:
    eager = _eager_of(module) or _generic_eager
    try:
        params = list(inspect.signature(eager).parameters)[5:]
    except (TypeError, ValueError):
        return {}
    return {n: a for n, a in zip(params, args)}


def register() -> None:
    """Register :data:`ATTN_NAME` with transformers (idempotent)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    from transformers.masking_utils import sdpa_mask

    AttentionInterface.register(ATTN_NAME, _record_attention)
    AttentionMaskInterface.register(ATTN_NAME, eager_mask)
    AttentionInterface.register(ATTN_FAST, _record_fast)
    AttentionMaskInterface.register(ATTN_FAST, sdpa_mask)  # boolean or no mask: nothing T×T for causal models


def split_mask(mask: torch.Tensor, dtype_min: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """An additive mask as (blocked: 0 / −inf, bias: the finite rest, 0 where blocked). transformers
    blocks with the dtype's minimum; boolean masks (True = may attend) have no bias."""
    if mask.dtype == torch.bool:
        blocked = torch.where(mask, 0.0, float("-inf"))
        return blocked, torch.zeros_like(blocked)
    m = mask.float()
    lo = torch.finfo(mask.dtype).min / 2 if dtype_min is None else dtype_min
    gone = (m <= lo) | torch.isneginf(m)
    return torch.where(gone, float("-inf"), 0.0), torch.where(gone, 0.0, m)


def blocked_map(blocked: torch.Tensor, Tq: int, Tk: int) -> torch.Tensor:
    """The (Tq, Tk) map of :func:`split_mask`'s ``blocked`` (0 / −inf) of the first batch row and head, as
    the trace stores one mask per layer."""
    return torch.broadcast_to(blocked.reshape(-1, *blocked.shape[-2:])[0], (Tq, Tk))


class AttentionRecorder:
    """Context that runs ``model`` on :data:`ATTN_NAME` and collects :class:`AttentionCall` s.

    Parameters
    ----------
    model : a transformers ``PreTrainedModel``.
    keep : predicate on a call's module name: False keeps only ``probs`` of that call (default: all).
    keep_grad : keep ``probs`` attached to the graph (gradient rollout); everything else is detached.
    probs_dtype : dtype of the probabilities kept of calls that ``keep`` rejects (default: as computed).
    fast : run on the fastest kernel (:data:`ATTN_FAST`): calls keep ``lse`` instead of probabilities, and every
        call keeps ``query``/``key``/``lse`` (O(T·d)) so that any layer's probabilities can be recomputed.
    """

    def __init__(self, model: nn.Module, keep: Callable[[str], bool] | None = None, keep_grad: bool = False,
                 probs_dtype: torch.dtype | None = None, fast: bool = False):
        if fast and keep_grad:
            raise ValueError("gradients need the recorded probabilities: fast recording keeps none")
        self.model, self.keep, self.keep_grad, self.probs_dtype = model, keep, keep_grad, probs_dtype
        self.fast, self.name = fast, ATTN_FAST if fast else ATTN_NAME
        self.calls: list[AttentionCall] = []
        self.plan = module_plan(model)  # one walk over the modules per model, not per capture
        self.names = self.plan.names
        self.modules = self.plan.select(model, "attention", is_attention_module)
        self._pending: dict[int, AttentionCall] = {}
        self._handles: list = []
        self._before = None
        self._training: list[nn.Module] = []
        self.on_call: Callable | None = None  # (call, probs, mask as the model had them): see the docstring

    # -- context ---------------------------------------------------------------------------------
    def __enter__(self) -> "AttentionRecorder":
        register()
        try:
            self._before = attn_implementation(self.model.config)
            if self._before != self.name:
                self.model.set_attn_implementation(self.name)
            self._training = [m for m in self.plan.modules(self.model) if m.training]
            for m in self._training:
                m.training = False
            for m in self.modules:
                self._hook(m)
            self._token = _ACTIVE.set(_ACTIVE.get() + (self,))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        token, self._token = getattr(self, "_token", None), None
        if token is not None:
            _ACTIVE.reset(token)
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._pending.clear()
        for m in self._training:
            m.training = True
        self._training = []
        if self._before is not None and self._before != self.name:
            self.model.set_attn_implementation(self._before)
        self._before = None

    # -- hooks -----------------------------------------------------------------------------------
    def _hook(self, module: nn.Module) -> None:
        self._handles.append(module.register_forward_pre_hook(self._enter_module, with_kwargs=True))
        self._handles.append(module.register_forward_hook(self._leave_module))
        for child_name, child in module.named_children():
            if not isinstance(child, (nn.Dropout, nn.ModuleList, nn.ModuleDict)):
                self._handles.append(child.register_forward_hook(self._projection(module, child_name)))

    def _wanted(self, name: str) -> bool:
        return self.keep is None or bool(self.keep(name))

    def _enter_module(self, module, args, kwargs):
        name = self.names.get(id(module), type(module).__name__)
        call = AttentionCall(module=module, name=name, index=-1,
                             layer=getattr(module, "layer_idx", None), kept=self._wanted(name))
        if call.kept:
            x = args[0] if args else kwargs.get("hidden_states")
            call.x = x.detach() if isinstance(x, torch.Tensor) else None
            kv = kwargs.get("key_value_states", kwargs.get("encoder_hidden_states"))
            if kv is None and len(args) > 1 and isinstance(args[1], torch.Tensor) and args[1].dim() == 3 \
                    and getattr(module, "is_cross_attention", False):
                kv = args[1]
            call.x_kv = kv.detach() if isinstance(kv, torch.Tensor) else None
            rope = kwargs.get("position_embeddings")
            if isinstance(rope, (tuple, list)) and len(rope) == 2 and all(isinstance(t, torch.Tensor) for t in rope):
                call.rope = (rope[0].detach(), rope[1].detach())
        self._pending[id(module)] = call

    def _leave_module(self, module, args, out):
        self._pending.pop(id(module), None)

    def _projection(self, module, child_name):
        def hook(child, args, out):
            call = self._pending.get(id(module))
            if call is not None and call.kept and isinstance(out, torch.Tensor):
                arg = args[0] if args and isinstance(args[0], torch.Tensor) else None
                call.proj[child_name] = (arg.detach() if arg is not None else None, out.detach())
        return hook

    def _attention(self, module, query, key, value, mask, z, probs, args, kwargs, lse=None, is_causal=False) -> None:
        call = self._pending.pop(id(module), None)
        if call is None:  # a module the hooks did not find (its forward is not a plain interface caller)
            name = self.names.get(id(module), type(module).__name__)
            call = AttentionCall(module=module, name=name, index=-1, layer=getattr(module, "layer_idx", None),
                                 kept=self._wanted(name))
        else:  # the output projection runs after the attention function: keep the call open for it
            self._pending[id(module)] = call
        call.index = len(self.calls)
        if lse is not None:  # fast: what recomputes every probability (O(T·d)), for every call
            B, H, Tq = lse.shape
            call.probs = torch.empty((B, H, Tq, key.shape[-2]), device="meta")  # the shape alone
            call.lse, call.is_causal = lse.detach(), bool(is_causal)
            call.query, call.key = query.detach(), key.detach()
            call.mask = mask.detach() if isinstance(mask, torch.Tensor) else None
            call.scaling = float(kwargs["scaling"])
            softcap = kwargs.get("softcap")
            call.softcap = float(softcap) if softcap else None
            window = kwargs.get("sliding_window")
            call.sliding_window = int(window) if window else None
        else:
            call.probs = probs if self.keep_grad else probs.detach()
        if not call.kept and self.probs_dtype is not None and not self.keep_grad and lse is None:
            call.probs = call.probs.to(self.probs_dtype)  # a layer not asked for: held compactly
        if call.kept:
            if args:  # positional extras: named by the eager function's own signature
                kwargs = {**_bind(module, args), **kwargs}
            call.query, call.key, call.value, call.z = query.detach(), key.detach(), value.detach(), z.detach()
            call.mask = mask.detach() if isinstance(mask, torch.Tensor) else None
            scaling = kwargs.get("scaling")
            call.scaling = float(scaling) if scaling is not None else query.shape[-1] ** -0.5
            softcap = kwargs.get("softcap")
            call.softcap = float(softcap) if softcap else None
            window = kwargs.get("sliding_window")
            call.sliding_window = int(window) if window else None
            call.dropout = float(kwargs.get("dropout") or 0.0)
            sinks = getattr(module, "sinks", None)
            call.sinks = sinks.detach() if isinstance(sinks, torch.Tensor) else None
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call, probs, mask)
