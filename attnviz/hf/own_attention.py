"""Record the attention of families that compute it themselves (Falcon, Bloom, GPT-Neo, MPT, DeBERTa-v2), not through
transformers' attention interface (Qt-free).

These modules do not call ``ALL_ATTENTION_FUNCTIONS``, so :mod:`attnviz.hf.attention_record` cannot see their
queries and keys. Their public submodules still can be watched with forward hooks (nothing is patched): the
attention module's inputs (``hidden_states``, the mask, Falcon's rotary tables or ALiBi, DeBERTa's relative
positions and embeddings), the projections' outputs, and the module's own results with ``output_attentions``
(the probabilities; DeBERTa's context = z). From those, one small adapter per family builds the same
:class:`~attnviz.hf.attention_record.AttentionCall` the interface gives, so the rest of the capture (projection
reading and its checks, layer arrays, the description) is shared:

- Falcon: the fused ``query_key_value`` split by the module's own head layout (separate heads, multi-query or
  grouped), keys and queries rotated with the rotary tables the module received (``rotate_half`` convention);
  scale 1/√d_head; with ALiBi the bias the module adds (ALiBi·scale, plus the part the model folds into the mask)
  goes into the mask's finite part, which the trace shows as ``bias``; z is the output projection's input.
- Bloom: the same fused reading (its own ``_reshape`` layout), always ALiBi (times ``beta``) as the bias.
- GPT-Neo: separate projections, scale 1 (the model does not scale its scores), the mask from the module's own
  causal buffer (a band of ``window_size`` in its local layers: the trace's sliding window).
- MPT: its fused ``Wqkv`` in three column blocks (clamped as the model clamps), ALiBi from the ``position_bias`` it
  received as the mask's finite part (:mod:`attnviz.hf.mpt_attention`).
- DeBERTa-v2: q, k, v from ``query_proj``/``key_proj``/``value_proj``; the disentangled content→position and
  position→content terms are the module's own ``disentangled_attention_bias`` on those q, k (called once more
  from the hook, on what the module received), already divided by their own √(d_head·factor); the content
  scores' scale is 1/√(d_head·factor) (factor = 1 + one per c2p/p2c term); the mask is the module's boolean mask.

Every call is then checked: softmax(q kᵀ·scale + mask) from the built arrays must give the probabilities the model
returned (three query rows). A call that does not is kept as probabilities only and named in ``failed``.
"""

from __future__ import annotations

import inspect

import torch
from torch import nn

from attnviz.hf.attention_record import AttentionCall
from attnviz.hf.mpt_attention import CHILDREN as _MPT_CHILDREN
from attnviz.hf.mpt_attention import mpt_full
from attnviz.hf.private_names import bloom_reshape, falcon_split_heads, gpt_neo_split_heads
from attnviz.hf.projections import rotate

__all__ = ["OwnAttentionRecorder", "ADAPTED"]


def _distinct_heads(cols: torch.Tensor, dh: int) -> torch.Tensor:
    """Column indices with heads that repeat the head before them dropped: Falcon's grouped layout broadcasts
    each key/value head to its query heads; the trace keeps the H_kv heads the weights really have (query head
    h reads key/value head h // (H/H_kv), as for every grouped-query model)."""
    rows = cols.view(-1, dh)
    keep = [0] + [i for i in range(1, rows.shape[0]) if not torch.equal(rows[i], rows[i - 1])]
    return rows[keep].reshape(-1)


def _fused(module, bound: dict, proj: dict, split, alibi_factor: float) -> dict:
    """Falcon and Bloom: one fused ``query_key_value`` split by the module's own layout function, read on
    column numbers (a (1, 1, F) tensor of indices, not on data), so every layout variant is the model's."""
    fused_in, fused = proj["query_key_value"]
    H, dh = module.num_heads, module.head_dim
    index = torch.arange(fused.shape[-1], dtype=torch.float64).view(1, 1, -1)
    cols = {p: _distinct_heads(t.reshape(-1).round().long(), dh) for p, t in zip("qkv", split(index))}
    heads = lambda t: t[0].reshape(t.shape[1], -1, dh).transpose(0, 1)[None]  # noqa: E731 (B,T,n·dh)→(1,n,T,dh)
    q, k, v = (heads(fused[..., cols[p]]) for p in "qkv")
    alibi, mask, rope = bound.get("alibi"), bound.get("attention_mask"), bound.get("position_embeddings")
    if alibi is None:
        cos, sin = rope
        q, k = rotate(q[0], cos[0], sin[0])[None], rotate(k[0], cos[0], sin[0])[None]
    else:  # scores·scale + ALiBi·factor + mask: the ALiBi term joins the mask's finite part (the trace's bias)
        rope = None
        bias = alibi.view(q.shape[0], H, 1, k.shape[-2]) * alibi_factor
        mask = bias if mask is None else mask + bias
    z_in = proj["dense"][0]
    return dict(query=q, key=k, value=v, mask=mask, scaling=module.inv_norm_factor, rope=rope,
                z=z_in.reshape(z_in.shape[0], z_in.shape[1], H, dh), x=fused_in,
                columns={p: ("query_key_value", c) for p, c in cols.items()})


def _falcon(module, bound: dict, proj: dict, out) -> dict:
    # Falcon: (scores + ALiBi)·scale (+ the ALiBi/√d_head it folds into the mask, already in ``mask``)
    return _fused(module, bound, proj, falcon_split_heads(module), module.inv_norm_factor)


def _bloom(module, bound: dict, proj: dict, out) -> dict:
    # Bloom: ALiBi·beta + scores·scale
    return _fused(module, bound, proj, bloom_reshape(module), float(module.beta))


def _gpt_neo(module, bound: dict, proj: dict, out) -> dict:
    """GPT-Neo: no scaling (scale 1); the module's own causal buffer (banded for local layers) blocks what
    the model's mask does not."""
    H, dh = module.num_heads, module.head_dim
    q, k, v = (gpt_neo_split_heads(module)(proj[n][1], H, dh) for n in ("q_proj", "k_proj", "v_proj"))
    Tq, Tk = q.shape[-2], k.shape[-2]
    allowed = module.bias[:, :, Tk - Tq:Tk, :Tk]
    extra = bound.get("attention_mask")
    blocked = torch.tensor(torch.finfo(torch.float32).min)
    mask = torch.where(allowed, extra.float() if extra is not None else torch.zeros(()), blocked)
    window = int(module.config.window_size) if module.attention_type == "local" else None
    z_in = proj["out_proj"][0]
    return dict(query=q, key=k, value=v, mask=mask, scaling=1.0, rope=None, sliding_window=window,
                z=z_in.reshape(z_in.shape[0], z_in.shape[1], H, dh), x=proj["q_proj"][0])


def _deberta_v2(module, bound: dict, proj: dict, out) -> dict | None:
    H = module.num_attention_heads
    qs, ks, vs = (proj[n][1] for n in ("query_proj", "key_proj", "value_proj"))
    B, Tq, Tk = qs.shape[0], qs.shape[1], ks.shape[1]
    flat = lambda t: module.transpose_for_scores(t, H)  # noqa: E731 (B·H, T, dh), the module's own reshape
    factor = 1 + ("c2p" in module.pos_att_type) + ("p2c" in module.pos_att_type)
    dh = qs.shape[-1] // H
    bias = torch.zeros(B * H, Tq, Tk, dtype=qs.dtype, device=qs.device)
    if module.relative_attention:
        rel = module.pos_dropout(bound["rel_embeddings"])
        bias = module.disentangled_attention_bias(flat(qs), flat(ks), bound.get("relative_pos"), rel, factor)
    allowed = bound["attention_mask"].bool()
    allowed = allowed if allowed.dim() == 4 else allowed.unsqueeze(1)
    mask = bias.view(B, H, Tq, Tk).masked_fill(~allowed, torch.finfo(qs.dtype).min)
    context = out[0]  # (B, T, H·dh) before the output projection
    return dict(query=flat(qs).view(B, H, Tq, dh), key=flat(ks).view(B, H, Tk, dh), value=flat(vs).view(B, H, Tk, dh),
                mask=mask, scaling=float(factor * dh) ** -0.5, z=context.reshape(B, Tq, H, dh), rope=None,
                x=proj["key_proj"][0])


# "modeling file.attention class" → (adapter, the children whose (input, output) it reads); the file is part of
# the key because other families reuse a class name for other code (DeBERTa v1's DisentangledSelfAttention)
ADAPTED = {"modeling_falcon.FalconAttention": (_falcon, ("query_key_value", "dense")),
           "modeling_bloom.BloomAttention": (_bloom, ("query_key_value", "dense")),
           "modeling_gpt_neo.GPTNeoSelfAttention": (_gpt_neo, ("q_proj", "k_proj", "v_proj", "out_proj")),
           "modeling_mpt.MptAttention": (mpt_full, _MPT_CHILDREN),
           "modeling_deberta_v2.DisentangledSelfAttention": (_deberta_v2, ("query_proj", "key_proj", "value_proj"))}


def _kind(module: nn.Module) -> str:
    cls = type(module)
    return f"{cls.__module__.rpartition('.')[2]}.{cls.__name__}"


def _probs_from(call) -> torch.Tensor:
    """softmax(q kᵀ·scale + mask) at three query rows, from the call's own tensors (GQA: kv head h // group)."""
    q, k = call.query[0].double(), call.key[0].double()
    k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)
    pick = torch.tensor(sorted({0, q.shape[1] // 2, q.shape[1] - 1}))
    s = q[:, pick] @ k.transpose(1, 2) * call.scaling
    if call.mask is not None:
        s = s + torch.broadcast_to(call.mask[0].double(), (q.shape[0], q.shape[1], k.shape[1]))[:, pick]
    return torch.softmax(s, dim=-1), pick


class OwnAttentionRecorder:
    """Forward hooks on the attention modules of the families in :data:`ADAPTED` (removed on exit).

    Run the model inside with ``output_attentions=True`` on eager attention. ``calls`` is the list of
    :class:`AttentionCall` in call order (``probs`` always; the rest when ``keep(name)`` and the call checks
    out); ``failed`` names the modules whose arrays did not reproduce the model's probabilities.
    """

    def __init__(self, model: nn.Module, keep=None, keep_grad: bool = False, probs_dtype: torch.dtype | None = None):
        self.keep, self.keep_grad, self.probs_dtype = keep, keep_grad, probs_dtype
        self.names = {id(m): n for n, m in model.named_modules()}
        self.modules = [m for m in model.modules() if _kind(m) in ADAPTED]
        self.calls: list[AttentionCall] = []
        self.failed: list[str] = []
        self._pending: dict[int, tuple] = {}
        self._handles: list = []

    def __enter__(self) -> "OwnAttentionRecorder":
        try:
            for m in self.modules:
                self._handles.append(m.register_forward_pre_hook(self._enter, with_kwargs=True))
                self._handles.append(m.register_forward_hook(self._leave))
                for child in ADAPTED[_kind(m)][1]:
                    sub = getattr(m, child, None)
                    if isinstance(sub, nn.Module):
                        self._handles.append(sub.register_forward_hook(self._child(m, child)))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._pending.clear()

    def _enter(self, module, args, kwargs):
        try:
            bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
        except TypeError:
            bound = dict(kwargs)
        self._pending[id(module)] = (bound, {})

    def _child(self, module, name):
        def hook(child, args, out):
            seen = self._pending.get(id(module))
            # only the first call: DeBERTa's shared keys run query_proj again on the position embeddings
            if seen is not None and name not in seen[1] and isinstance(out, torch.Tensor):
                seen[1][name] = (args[0].detach() if args else None, out.detach())
        return hook

    def _leave(self, module, args, out):
        bound, proj = self._pending.pop(id(module), ({}, {}))
        probs = out[1] if isinstance(out, (tuple, list)) and len(out) > 1 else None
        if not isinstance(probs, torch.Tensor):
            return  # run without output_attentions: nothing to show
        name = self.names.get(id(module), type(module).__name__)
        call = AttentionCall(module=module, name=name, index=len(self.calls), layer=getattr(module, "layer_idx", None),
                             kept=self.keep is None or bool(self.keep(name)))
        call.probs = probs if self.keep_grad else probs.detach()
        if call.kept:
            with torch.no_grad():
                self._fill(call, module, bound, proj, out)
        if not call.kept and self.probs_dtype is not None and not self.keep_grad:
            call.probs = call.probs.to(self.probs_dtype)
        self.calls.append(call)

    def _fill(self, call, module, bound, proj, out) -> None:
        adapter, children = ADAPTED[_kind(module)]
        built = None
        if all(c in proj for c in children):
            try:
                built = adapter(module, {k: (v.detach() if isinstance(v, torch.Tensor) else v)
                                         for k, v in bound.items()}, proj, out)
            except (KeyError, TypeError, ValueError, RuntimeError, AttributeError):
                built = None  # a variant of the family this adapter does not know: probabilities only
        if built is None:
            call.kept = False
            self.failed.append(call.name)
            return
        columns = built.pop("columns", None)
        for key, value in built.items():
            setattr(call, key, value.detach() if isinstance(value, torch.Tensor) else value)
        call.proj = dict(proj)
        call.columns = columns
        want = call.probs[0].detach().double()
        got, pick = _probs_from(call)
        if got.shape != want[:, pick].shape or not torch.allclose(got, want[:, pick], atol=1e-5, rtol=0):
            for key in ("query", "key", "value", "mask", "z", "x", "rope"):
                setattr(call, key, None)
            call.kept = False
            self.failed.append(call.name)
