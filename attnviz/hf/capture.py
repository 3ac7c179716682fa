"""Capture a Hugging Face model's attention into the same :class:`~attnviz.capture.Trace` as attnviz's own models.

Forward hooks on the modules each family names (:mod:`attnviz.hf.families`) see every intermediate
of the eager attention path: the block input, the Q/K/V projections (GPT-2's fused ``c_attn`` split in
three), the mask handed to the attention module, the probabilities it returns, concat(z) entering
the output projection and ``out`` leaving it, the residual stream after the attention sub-layer and
after the block. Shared layers (ALBERT) are called several times: one record per call, in call order.
Families without such a table give probabilities only (``meta["qkv_available"] = False`` and a
notice), read from the model's own ``output_attentions``.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from functools import partial

import numpy as np
import torch
from torch import nn

from attnviz.capture.record import LARGE_T
from attnviz.capture.trace import Trace
from attnviz.errors import ModelLoadError
from attnviz.hf.describe import describe_model, head_of
from attnviz.hf.families import Family, family_of
from attnviz.hf.output_head import DeferredPrediction, OutputHead
from attnviz.hf.tensor_numpy import TensorsToNumpy as _Numpy

__all__ = ["capture_hf", "eager_attention", "resolve", "NO_QKV_NOTICE"]

NO_QKV_NOTICE = ("{name}: attention probabilities only — attnviz cannot read this family's queries, keys "
                 "and values, so the step-by-step walkthrough and Q/K/V views are unavailable")
_PREFIX_PARAMS = {"[CLS]": "cls_token", "[DIST]": "distillation_token"}


def resolve(root: nn.Module, path: str) -> list[nn.Module]:
    """Modules at a dotted ``path`` below ``root``; ``*`` stands for every child. LookupError if absent."""
    found = [root]
    for part in path.split("."):
        nxt = []
        for m in found:
            if part == "*":
                nxt.extend(m.children())
            elif isinstance(getattr(m, part, None), (nn.Module, nn.Parameter)):
                nxt.append(getattr(m, part))
            else:
                raise LookupError(f"{type(m).__name__} has no {part!r} (path {path!r})")
        found = nxt
    if not found:
        raise LookupError(f"nothing at {path!r}")
    return found


def _one(root: nn.Module, path: str):
    return resolve(root, path)[0]


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _xw(mod: nn.Module, fan_in: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight in ``x W + b`` orientation (fan_in, out) and bias: nn.Linear stores Wᵀ, GPT-2's Conv1D W."""
    w = mod.weight.T if isinstance(mod, nn.Linear) else mod.weight
    if w.shape[0] != fan_in:
        raise LookupError(f"{type(mod).__name__} weight {tuple(mod.weight.shape)} does not take {fan_in} inputs")
    b = mod.bias if getattr(mod, "bias", None) is not None else torch.zeros(w.shape[1], dtype=w.dtype)
    return w, b


@contextmanager
def eager_attention(model):
    """Run ``model`` on transformers' eager attention in eval mode; restore both afterwards."""
    before = model.config._attn_implementation
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


_SIGNATURES: dict = {}


def _signature(method) -> inspect.Signature:
    """inspect.signature of a module's bound ``forward``, worked out once per function (12 attention
    modules a BERT-base run: ~1.5 ms a keystroke); an instance whose forward was replaced (a wrapper)
    is keyed by that callable itself."""
    func = getattr(method, "__func__", None)
    if func is None:
        return inspect.signature(method)
    sig = _SIGNATURES.get(func)
    if sig is None:
        sig = _SIGNATURES[func] = inspect.signature(method)
    return sig


class _Recorder:
    """Forward hooks filling one dict per block call; removed on exit, also after an exception."""

    def __init__(self, model: nn.Module, family: Family):
        self.base, self.family = model.base_model, family
        self.calls: list[dict] = []
        self.emb: dict = {}
        self.handles = []
        try:
            self._register(resolve(self.base, family.layers))
        except BaseException:
            self.__exit__()  # never leave a hook behind
            raise

    def _register(self, blocks) -> None:
        family = self.family
        for block in blocks:
            attn = _one(block, family.attn)
            self._pre(block, self._begin)
            self._post(block, lambda m, a, o: self._put("resid", _first(o)))
            self._pre(attn, partial(self._mask, _signature(attn.forward)))
            self._post(attn, lambda m, a, o: self._put("probs", o[1]))
            if family.qkv:
                self._post(_one(block, family.qkv), self._fused)
            else:
                for name, path in zip("qkv", family.projections):
                    self._post(_one(block, path), partial(self._proj, name))
            self._post(_one(block, family.o), self._out)
            path, side = family.h
            if side == "in":
                self._pre(_one(block, path), lambda m, a, kw: self._put("h", a[0]))
            else:
                self._post(_one(block, path), lambda m, a, o: self._put("h", _first(o)))
        if family.word:
            self._post(_one(self.base, family.word), lambda m, a, o: self.emb.setdefault("token", o))
        if family.patch:  # conv output (1, D, gh, gw) → (1, N, D) patch rows
            self._post(_one(self.base, family.patch),
                       lambda m, a, o: self.emb.setdefault("patch", o.flatten(2).transpose(1, 2)))
        pos = _one(self.base, family.pos)
        if isinstance(pos, nn.Parameter):
            self.emb["pos"] = pos  # (1, T, D) table added as a whole (ViT)
        else:
            self._post(pos, lambda m, a, o: self.emb.setdefault("pos", o))

    def _pre(self, mod, fn):
        def hook(m, args, kwargs):
            fn(m, args, kwargs)  # returning None leaves the inputs unchanged

        self.handles.append(mod.register_forward_pre_hook(hook, with_kwargs=True))

    def _post(self, mod, fn):
        def hook(m, args, out):
            fn(m, args, out)  # returning None leaves the output unchanged

        self.handles.append(mod.register_forward_hook(hook))

    def _put(self, key, value):
        self.calls[-1][key] = value

    def _begin(self, m, args, kwargs):
        self.calls.append({"block": m, "stream": args[0] if args else kwargs.get("hidden_states")})

    def _mask(self, sig, m, args, kwargs):
        try:
            self._put("mask", sig.bind_partial(*args, **kwargs).arguments.get("attention_mask"))
        except TypeError:
            self._put("mask", None)

    def _proj(self, name, m, args, out):
        self.calls[-1].setdefault("x", args[0])
        self._put(name, out)

    def _fused(self, m, args, out):
        self._put("x", args[0])
        q, k, v = out.chunk(3, dim=-1)  # (1, T, 3·H·dh) → three (1, T, H·dh)
        self.calls[-1].update(q=q, k=k, v=v)

    def _out(self, m, args, out):
        self.calls[-1].update(z=args[0], out=out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles.clear()


def _heads(t: torch.Tensor, dh: int) -> torch.Tensor:
    T = t.shape[0]
    return t.reshape(T, -1, dh).transpose(0, 1)  # (T, heads·dh) → (heads, T, dh)


def _block_weights(block, family: Family, D: int, inner: int) -> dict[str, torch.Tensor]:
    if family.qkv:
        W, b = _xw(_one(block, family.qkv), D)  # (D, 3·inner)
        ws, bs = W.split(inner, dim=1), b.split(inner)
    else:
        pairs = [_xw(_one(block, p), D) for p in family.projections]
        ws, bs = [w for w, _ in pairs], [b for _, b in pairs]
    W_o, b_o = _xw(_one(block, family.o), inner)
    return {"W_q": ws[0], "W_k": ws[1], "W_v": ws[2], "W_o": W_o,
            "b_q": bs[0], "b_k": bs[1], "b_v": bs[2], "b_o": b_o}


def _layer_arrays(rec: dict, i: int, weights: dict, conv: _Numpy, dh: int, keep: bool) -> dict:
    p = f"L{i}."
    q, k, v = (_heads(rec[n][0], dh) for n in "qkv")  # (H, T, dh)
    probs = rec["probs"][0]  # (H, Tq, Tk)
    out = {p + "x": conv(rec["x"][0]), p + "q": conv(q), p + "k": conv(k), p + "v": conv(v),
           p + "probs": conv(probs), p + "mask": conv.mask(rec.get("mask"), *probs.shape[-2:]),
           p + "z": conv(_heads(rec["z"][0], dh)), p + "h": conv(rec["h"][0]), p + "resid": conv(rec["resid"][0])}
    # logits = q·kᵀ·scale are not stored: Trace rebuilds them from q and k when a view asks
    # (Trace._DERIVED), which saves a second QKᵀ product per layer on every keystroke.
    if keep:  # long inputs recompute out on demand too
        out[p + "out"] = conv(rec["out"][0])
    out.update({p + name: conv(w) for name, w in weights.items()})
    return out


def _embeddings(rec: _Recorder, conv: _Numpy, T: int) -> dict:
    emb, out = rec.emb, {}
    if "patch" in emb:  # vision: prefix tokens ([CLS], [DIST]) then the patch rows
        embeddings = _one(rec.base, "embeddings")
        rows = [getattr(embeddings, _PREFIX_PARAMS[p]).reshape(1, 1, -1) for p in rec.family.prefix]
        emb["token"] = torch.cat(rows + [emb["patch"]], dim=1)
        out["emb.patch_weight"] = conv(_one(rec.base, rec.family.patch).weight)  # (D, C, P, P) filters
    for name in ("token", "pos"):
        if name in emb and emb[name].shape[1] == T:
            out[f"emb.{name}"] = conv(emb[name][0])
    out["emb.sum"] = conv(rec.calls[0]["stream"][0])  # the residual stream entering layer 0
    return out


def _prediction(logits, head: str) -> np.ndarray | None:
    if logits is None or head == "none" or logits.dim() not in (2, 3):
        return None
    probs = torch.softmax(logits.detach().float(), dim=-1)[0]
    return (probs[-1] if head == "lm" else probs).cpu().numpy()  # (V,) next token, (C,) or (T, C)


def _backward(logits, target):
    flat = logits[0] if logits.dim() == 2 else logits[0, -1]
    idx = int(flat.argmax()) if target is None else int(target)
    flat[idx].backward()


_NEEDED = ("stream", "x", "q", "k", "v", "probs", "z", "out", "h", "resid")


def _check_calls(calls: list[dict], n_layers: int, arch: str) -> None:
    """Every block call must have been seen whole, once per layer; otherwise the table is wrong."""
    missing = sorted({k for c in calls for k in _NEEDED if k not in c})
    if len(calls) != n_layers or missing:
        raise ModelLoadError(f"{arch}: attnviz saw {len(calls)} of {n_layers} attention layers"
                             + (f" without {', '.join(missing)}" if missing else "")
                             + "; this version of transformers lays the model out differently")


def _layout(model, family: Family, D: int, inner: int, dh: int):
    """(weights per block, the one softmax scale) when the model matches its family's table, else None.

    Everything the hooks need is resolved before any hook is registered; a model laid out otherwise
    (another transformers version) or scaled per layer (GPT-2's ``scale_attn_by_inverse_layer_idx``)
    falls back to probabilities only.
    """
    base = model.base_model
    try:
        blocks = resolve(base, family.layers)
        for block in blocks:
            for path in (family.attn, family.o, family.h[0], *family.projections):
                _one(block, path)
        for path in (family.word, family.pos, family.patch):
            if path:
                _one(base, path)
        weights = {id(b): _block_weights(b, family, D, inner) for b in blocks}
    except LookupError:
        return None
    scales = {round(float(getattr(_one(b, family.attn), "scaling", dh**-0.5)), 12) for b in blocks}
    return (weights, scales.pop()) if len(scales) == 1 else None


def _forward(model, family: Family | None, inputs: dict, n_layers: int, arch: str):
    """Run the model once: with the hooks of ``family``, or (None) asking for its own attention output.

    Returns (recorder or None, logits or None, probabilities per layer (1, H, T, T)).
    """
    if family is not None:
        with _Recorder(model, family) as rec:
            out = model(**inputs)
        _check_calls(rec.calls, n_layers, arch)
        probs_list = [c["probs"] for c in rec.calls]
    else:
        rec = None
        try:
            out = model(**inputs, output_attentions=True)
        except Exception as exc:  # a family attnviz has no table for may want inputs it does not make
            raise ModelLoadError(f"{arch} cannot run on this input: {str(exc).strip()[:200]}") from None
        probs_list = list(getattr(out, "attentions", None) or [])
    if not probs_list or any(p.dim() != 4 or p.shape[-1] != p.shape[-2] for p in probs_list):
        raise ModelLoadError(f"{arch} returns no token-by-token attention maps attnviz can show")
    return rec, getattr(out, "logits", None), probs_list


def capture_hf(model, inputs: dict, tokens: list[str], meta: dict | None = None, grad: bool = False,
               target: int | None = None, precision: str = "auto") -> Trace:
    """One eager forward pass of a batch-of-one input; same arguments and result as :func:`attnviz.capture.capture`.

    Parameters
    ----------
    model : a ``transformers`` model (loaded by :func:`attnviz.hf.loader.load_hf_model`, which sets
        ``model.cfg``, the attnviz :class:`~attnviz.models.config.ModelConfig` describing it).
    inputs : keyword arguments of the model (``input_ids`` or ``pixel_values``), batch size 1.
    tokens : labels of the positions.
    grad : also record d(target logit)/d(probs) as ``L{i}.grad``.
    precision : "float32", "float16" or "auto" (float16 and derived arrays dropped above 512 tokens).
    """
    hf_cfg = model.config
    arch = (getattr(hf_cfg, "architectures", None) or [type(model).__name__])[0]
    cfg = getattr(model, "cfg", None) or describe_model(hf_cfg, arch)
    family = family_of(hf_cfg.model_type)
    H, dh = cfg.n_heads, cfg.head_dim
    notices = [meta.get("notice")] if meta and meta.get("notice") else []
    layout = _layout(model, family, cfg.d_model, H * dh, dh) if family is not None else None
    if family is not None and layout is None:
        notices.append(f"{family.name}: this model's layers are not laid out (or scaled) as attnviz expects")
    full = layout is not None
    weights, scale = layout if full else ({}, dh**-0.5)
    T = len(tokens)
    dtype = np.float16 if precision == "float16" or (precision == "auto" and T > LARGE_T) else np.float32
    conv = _Numpy(dtype)
    head = head_of(arch)
    deferred: dict = {}
    with eager_attention(model):
        with torch.set_grad_enabled(grad), OutputHead(model, head, enabled=not grad) as output_head:
            rec, logits, probs_list = _forward(model, family if full else None, inputs, cfg.n_layers, arch)
            if grad and logits is not None:
                for p in probs_list:
                    p.retain_grad()
                model.zero_grad(set_to_none=True)
                _backward(logits, target)
        with torch.no_grad():
            T_run = probs_list[0].shape[-1]
            arrays: dict[str, np.ndarray] = {}
            if full:
                for i, c in enumerate(rec.calls):  # shared layers (ALBERT) share one set of weights
                    arrays.update(_layer_arrays(c, i, weights[id(c["block"])], conv, dh, keep=T_run <= LARGE_T))
                arrays.update(_embeddings(rec, conv, T_run))
            else:
                arrays.update({f"L{i}.probs": conv(p[0]) for i, p in enumerate(probs_list)})
                notices.append(NO_QKV_NOTICE.format(name=arch))
            if grad:
                for i, p in enumerate(probs_list):
                    g = p.grad
                    arrays[f"L{i}.grad"] = conv(g[0]) if g is not None else np.zeros(p.shape[1:], dtype)
            pred = output_head.prediction(logits, dtype, lambda lg: _prediction(lg, head))
            if isinstance(pred, DeferredPrediction) and pred.surely_finite():
                deferred["prediction"] = pred  # computed per row when shown (hf/output_head.py)
            elif pred is not None:
                pred = pred.full() if isinstance(pred, DeferredPrediction) else pred
                arrays["prediction"] = pred.astype(dtype, copy=False)
    grid = list(cfg.grid) if cfg.kind == "vit" else None
    if T_run != T:  # a family whose positions attnviz cannot name in advance
        tokens, grid = [str(i) for i in range(T_run)], None
    n_prefix = len(family.prefix) if family is not None else (1 if grid else 0)
    full_meta = {
        "kind": cfg.kind, "config": cfg.to_dict(), "scale": float(scale),
        "causal": cfg.kind == "decoder", "n_layers": len(probs_list), "n_enc_layers": 0,
        "n_heads": int(probs_list[0].shape[1]), "n_kv_heads": int(probs_list[0].shape[1]), "kv_group": 1,
        "d_head": dh, "grid": grid, "precision": np.dtype(dtype).name, **(meta or {}),
        "source": "huggingface", "hf_architecture": arch, "hf_family": family.name if family else hf_cfg.model_type,
        "qkv_available": full, "prefix_tokens": n_prefix,
        "emb_sum": "the residual stream entering layer 0 (after the embeddings' own LayerNorm, if any)",
    }
    if notices:
        full_meta["notice"] = "; ".join(dict.fromkeys(notices))
    return Trace(tokens=list(tokens), meta=full_meta, arrays=arrays, deferred=deferred)
