"""Run one forward pass on the explicit attention path and collect every intermediate."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from attnviz.capture.description import TraceDescription
from attnviz.capture.finish import backward_to_target, finish_trace, grad_array, storage_dtypes
from attnviz.capture.trace import LARGE_T, Trace, layer_prefix
from attnviz.capture.weights import parameter_view, shared_zeros
from attnviz.models.attention import Attention
from attnviz.models.registry import attention_layers

__all__ = ["capture", "recording", "LARGE_T"]

# LARGE_T (capture/trace.py): above it the trace keeps float16 arrays and recomputes the attention output from z
# on demand, so L=12, H=12, T=1024 stays well under half a gigabyte; the scores are recomputed at every length.


@contextmanager
def recording(model: nn.Module, keep_grad: bool = False):
    """Switch every attention module to the explicit path and give every recordable module a dict.

    The previous flags come back on exit, also when the forward pass raises.
    """
    everything = list(model.modules())
    modules = [m for m in everything if "record" in vars(m)]  # vars: no AttributeError raised per module
    saved = [(m, m.record, getattr(m, "fused", None), getattr(m, "keep_grad", None)) for m in modules]
    # evaluation mode, set per module and put back per module: model.eval() and model.train() walk the
    # whole tree through nn.Module.__setattr__ twice per keystroke (~a tenth of a small model's capture)
    # even though a loaded model is already in evaluation mode
    training = [m for m in everything if m.training]
    try:
        for m in training:
            m.training = False
        for m in modules:
            m.record = {}
            if isinstance(m, Attention):
                m.fused = False
                m.keep_grad = keep_grad
        yield
    finally:
        for m, record, fused, keep in saved:
            m.record = record
            if isinstance(m, Attention):
                m.fused, m.keep_grad = fused, keep
        for m in training:
            m.training = True


def _np(t: torch.Tensor, dtype) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy().astype(dtype, copy=False)


def _attention_arrays(attn: Attention, prefix: str, dtype, keep_derived: bool) -> dict[str, np.ndarray]:
    rec = attn.record
    out = {
        prefix + "x": _np(rec["x"][0], dtype),  # (T, D)
        prefix + "q": _np(rec["q"][0], dtype),  # (H, T, dh)
        prefix + "k": _np(rec["k"][0], dtype),  # (H_kv, T, dh)
        prefix + "v": _np(rec["v"][0], dtype),
        prefix + "mask": _np(rec["mask"][0, 0], np.float32),  # (Tq, Tk)
        prefix + "probs": _np(rec["probs"][0], dtype),  # (H, Tq, Tk)
        prefix + "z": _np(rec["z"][0], dtype),  # (H, Tq, dh)
    }
    if "x_kv" in rec:
        out[prefix + "x_kv"] = _np(rec["x_kv"][0], dtype)  # (T_enc, D)
    if attn.head_gate is not None:  # what-if ablation: out = concat(gate_h · z_h) W_O + b
        out[prefix + "head_gate"] = _np(attn.head_gate, np.float32)
    # the scores q·kᵀ·scale (H, Tq, Tk) are never stored: Trace recomputes them from q and k when asked (as big
    # as the probabilities, they doubled a short trace's T×T bytes)
    if keep_derived:  # for long inputs Trace recomputes this on demand
        out[prefix + "out"] = _np(rec["out"][0], dtype)  # (Tq, D)
    # weights in the "x @ W + b" orientation the lectures use (Q = X W_Q)
    # read-only views of the model's own parameters (attnviz.capture.weights): no trace copies them, at any precision
    for name, lin in (("q", attn.q_proj), ("k", attn.k_proj), ("v", attn.v_proj), ("o", attn.o_proj)):
        w = parameter_view(lin.weight.T)
        out[f"{prefix}W_{name}"] = w if w is not None else _np(lin.weight.T, np.float32)
        b = parameter_view(lin.bias) if lin.bias is not None else shared_zeros(lin.out_features)
        out[f"{prefix}b_{name}"] = b if b is not None else _np(lin.bias, np.float32)
    return out


def _prediction(model: nn.Module, logits: torch.Tensor) -> np.ndarray:
    cfg = model.cfg
    probs = torch.softmax(logits.detach().float(), dim=-1)[0]
    if cfg.kind in ("decoder", "encoder-decoder"):
        return probs[-1].cpu().numpy()  # next-token distribution after the last position
    return probs.cpu().numpy()  # (C,) or per-token (T, C)


def capture(
    model: nn.Module,
    inputs: dict[str, torch.Tensor],
    tokens: list[str],
    meta: dict | None = None,
    grad: bool = False,
    target: int | None = None,
    precision: str = "auto",
) -> Trace:
    """One explicit forward pass of a batch-of-one input; returns a :class:`Trace`.

    Parameters
    ----------
    model : an attnviz model (``model.cfg`` is its :class:`ModelConfig`).
    inputs : keyword arguments of ``model.forward`` (ids / images / src+tgt), batch size 1.
    tokens : labels of the (decoder) positions; for images "[CLS]" and patch names.
    grad : also record d(target logit)/d(attention probabilities) as ``L{i}.grad`` (gradient rollout).
    target : class (or next token) whose logit is differentiated; default: the predicted one.
    precision : "float32", "float16" or "auto" (float16 with logits recomputed on demand when T is large).
    """
    cfg = model.cfg
    T = len(tokens)
    large = T > LARGE_T
    dtype, _ = storage_dtypes(precision, T)
    layers = attention_layers(model)
    with recording(model, keep_grad=grad), torch.set_grad_enabled(grad):
        logits = model(**inputs)
        if grad:
            backward_to_target(model, logits, target)
        arrays: dict[str, np.ndarray] = {}
        first = layers["main"][0].attn
        unique_masks: list[np.ndarray] = []  # every layer has the same mask: hold one copy
        for role, blocks in layers.items():
            for i, block in enumerate(blocks):
                parts = [("enc" if role == "enc" else "self", block.attn)]
                if block.cross is not None:
                    parts.append(("cross", block.cross))
                for part, attn in parts:
                    prefix = layer_prefix(i, part)
                    arrays.update(_attention_arrays(attn, prefix, dtype, keep_derived=not large))
                    m = arrays[prefix + "mask"]
                    same = next((u for u in unique_masks if u.shape == m.shape and np.array_equal(u, m)), None)
                    if same is None:
                        unique_masks.append(m)
                    else:
                        arrays[prefix + "mask"] = same
                    if grad:
                        arrays[prefix + "grad"] = grad_array(attn.record["probs"], lambda t: _np(t, dtype), dtype)
                base = "enc." if role == "enc" else ""
                arrays[f"{base}L{i}.h"] = _np(block.record["h"][0], dtype)
                arrays[f"{base}L{i}.resid"] = _np(block.record["resid"][0], dtype)
                # post-LN blocks read the previous residual stream unchanged: hold that array once
                prev = arrays.get(f"{base}L{i - 1}.resid")
                x = arrays[layer_prefix(i, "enc" if role == "enc" else "self") + "x"]
                if prev is not None and prev.shape == x.shape and np.array_equal(prev, x):
                    arrays[layer_prefix(i, "enc" if role == "enc" else "self") + "x"] = prev
        embeds = [("", getattr(model, "embed", None) or getattr(model, "tgt_embed")),
                  ("enc.", getattr(model, "src_embed", None))]
        for base, emb in embeds:
            if emb is not None and emb.record:
                for name in ("token", "pos", "sum"):
                    arrays[f"{base}emb.{name}"] = _np(emb.record[name][0], dtype)
                table = getattr(getattr(emb, "pos", None), "table", None)
                if table is not None:  # every position the model holds, not only the input's (the PE figure)
                    arrays[f"{base}emb.pos_table"] = _np(table, np.float32)  # (max_len, D)
        if cfg.kind == "vit":  # the patch-embedding filters, for the ViT paper's PCA figure
            arrays["emb.patch_weight"] = _np(model.embed.proj.weight, dtype)  # (D, C, P, P)
        arrays["prediction"] = _prediction(model, logits)
        if cfg.kind == "encoder-decoder":  # what each decoder position wrote next (the panel follows the query)
            arrays["next_probs"] = torch.softmax(logits.detach().float(), dim=-1)[0].cpu().numpy()  # (T, C)
    described = TraceDescription(
        kind=cfg.kind, config=cfg.to_dict(), scale=float(first.scale), causal=bool(first.causal),
        n_layers=len(layers["main"]), n_enc_layers=len(layers.get("enc", [])), n_heads=cfg.n_heads,
        n_kv_heads=cfg.kv_heads, d_head=cfg.head_dim, grid=tuple(cfg.grid) if cfg.kind == "vit" else None,
        precision=np.dtype(dtype).name)
    return finish_trace(tokens, arrays, described, meta, known_finite=())
