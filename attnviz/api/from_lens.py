"""TransformerLens (optional: ``pip install 'attnviz[transformerlens]'``): a ``TransformerBridge`` (TransformerLens 4)
or a ``HookedTransformer`` (TransformerLens 3), and the ``ActivationCache`` its ``run_with_cache`` returns.

The cache holds per layer ``hook_pattern`` (1, H, T, T) and ``hook_q`` / ``hook_k`` / ``hook_v`` (1, T, H, dh).
A trace keeps the probabilities, and q, k, v where q·kᵀ·scale reproduces the cache's own ``hook_attn_scores``
(a model that rotates q and k after those hooks does not, and keeps probabilities only, said in ``missing``).
That cache alone has no residual stream or projection weights. A ``TransformerBridge`` also holds the
transformers model it wraps: :class:`LensModel` traces that model whole (:mod:`attnviz.api.lens_unbridged`,
same tensors, nothing copied) and keeps it only where its probabilities equal the bridge's own cache.
Nothing here imports TransformerLens: the objects are recognised by their class's module.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnviz.api.checks import check_text
from attnviz.errors import AttnvizError, InputError

__all__ = ["is_lens_model", "is_lens_cache", "LensModel", "from_lens_cache"]

_SCORE_ATOL = 1e-4


def _from_lens(obj) -> bool:
    return any(c.__module__.startswith("transformer_lens") for c in type(obj).__mro__)


def is_lens_model(obj) -> bool:
    """A TransformerLens model (``TransformerBridge`` or ``HookedTransformer``)."""
    return _from_lens(obj) and callable(getattr(obj, "run_with_cache", None))


def is_lens_cache(obj) -> bool:
    """A TransformerLens ``ActivationCache``."""
    return _from_lens(obj) and callable(getattr(obj, "stack_activation", None))


def _heads_first(t) -> np.ndarray:
    a = t.detach().float().cpu().numpy()
    return np.ascontiguousarray(a[0].transpose(1, 0, 2))  # (1, T, H, dh) → (H, T, dh)


def _scale(cfg, d_head: int) -> float:
    attn_scale = float(getattr(cfg, "attn_scale", -1.0) or -1.0)
    return 1.0 / attn_scale if attn_scale > 0 else d_head ** -0.5  # TransformerLens divides scores by attn_scale


def from_lens_cache(cache, tokens, name: str = "transformerlens", cfg=None):
    """A TransformerLens ``ActivationCache`` (batch of one) and its tokens → :class:`~attnviz.api.Traced`.

    Parameters
    ----------
    cache : what ``model.run_with_cache(text)`` returns (second item).
    tokens : ``model.to_str_tokens(text)``.
    name : what the figures call the model; cfg : the model's ``cfg`` (its ``attn_scale``), if known.
    """
    from attnviz.api.from_attentions import from_attentions
    from attnviz.api.traced import Traced
    from attnviz.capture.finish import finish_trace

    traced = from_attentions(cache.stack_activation("pattern"), tokens, name=name)
    trace = traced.trace
    n_layers, kept, scale = trace.n_layers, [], None
    for i in range(n_layers):
        names = {p: f"blocks.{i}.attn.hook_{p}" for p in ("q", "k", "v", "attn_scores")}
        if not all(n in cache for n in names.values()):
            continue
        q, k, v = (_heads_first(cache[names[p]]) for p in ("q", "k", "v"))
        if q.shape[0] != k.shape[0]:
            continue  # grouped K/V: the cache's k per K/V head would need the group map; probabilities only
        scale = _scale(cfg, q.shape[-1])
        scores = cache[names["attn_scores"]].detach().float().cpu().numpy()[0]  # (H, T, T)
        ours = np.einsum("htd,hsd->hts", q.astype(np.float64), k.astype(np.float64)) * scale
        seen = scores > -1e30  # the masked cells hold the dtype's minimum, not −∞
        if not np.allclose(ours[seen], scores[seen], atol=_SCORE_ATOL, rtol=1e-4):
            continue
        for part, a in (("q", q), ("k", k), ("v", v)):
            trace.arrays[f"L{i}.{part}"] = a
        trace.arrays[f"L{i}.mask"] = np.where(seen.all(axis=0), 0.0, -np.inf).astype(np.float32)  # (T, T)
        kept.append(i)
    for a in trace.arrays.values():
        a.flags.writeable = False
    missing = ["x, z, W_Q…W_O, the residual stream: a TransformerLens cache gives probabilities and q, k, v; "
               "attnviz.load(the Hugging Face model) traces it all"]
    if len(kept) != n_layers:
        missing.append(f"q, k, v of layers {', '.join(str(i) for i in range(n_layers) if i not in kept)} (their "
                       "q·kᵀ does not reproduce the cache's scores: rotated after the hooks, or grouped K/V)")
    description = dataclasses.replace(trace.description, scale=scale, source="transformerlens",
                                      qkv_available=len(kept) == n_layers, missing=tuple(missing),
                                      notice="TransformerLens cache: attention probabilities and q, k, v")
    return Traced(finish_trace(trace.tokens, trace.arrays, description))


class LensModel:
    """A TransformerLens model for notebooks: ``trace(text)`` runs ``run_with_cache`` → :class:`Traced`."""

    def __init__(self, model, tokenizer=None, name: str | None = None, load_plain=None):
        if tokenizer is not None:
            raise AttnvizError("a TransformerLens model brings its own tokenizer: leave tokenizer= out")
        self.lens = model
        cfg = getattr(model, "cfg", None)
        self._name = name or str(getattr(cfg, "model_name", None) or type(model).__name__)
        # load_plain(transformers model, tokenizer, name) → attnviz's Model (attnviz.load, passed in: no import cycle)
        self._load_plain = load_plain
        self._plain = None  # attnviz's Model of the bridge's transformers model, once built
        self._why_not_whole = "" if load_plain is not None else "no loader for its transformers model"

    @property
    def name(self) -> str:
        return self._name

    def trace(self, text: str | None = None, **unused):
        """Run ``text`` through the model → :class:`~attnviz.api.Traced`.

        A ``TransformerBridge``: the whole trace (x, q, k, v, z, weights, the walkthrough) of the
        transformers model inside it, tokenised by the bridge's tokenizer, checked against the bridge's own
        ``run_with_cache`` of the same tokens: every layer's probabilities within 1e-5, else the cache's own
        trace with the reason in ``meta["notice"]``. A ``HookedTransformer``: the cache's probabilities and
        q, k, v.
        """
        import torch

        text = check_text(text)
        if unused:
            raise AttnvizError(f"a TransformerLens trace takes text only, not {', '.join(sorted(unused))}")
        if text is None or not text.strip():
            raise InputError("give text=: a TransformerLens model reads text")
        whole = self._whole(text)
        if whole is not None:
            return whole
        with torch.no_grad():
            _, cache = self.lens.run_with_cache(text)
        tokens = [str(t) for t in self.lens.to_str_tokens(text)]
        traced = from_lens_cache(cache, tokens, name=self.name, cfg=getattr(self.lens, "cfg", None))
        if self._why_not_whole:
            traced.trace.meta["notice"] = f"{traced.trace.description.notice} ({self._why_not_whole})"
        return traced

    def _whole(self, text: str):
        """The full trace of the bridge's transformers model, or None (reason in ``_why_not_whole``)."""
        import torch

        if self._plain is None and not self._why_not_whole:
            from attnviz.api.lens_unbridged import unbridged_model

            fresh = unbridged_model(self.lens)
            tok = getattr(self.lens, "tokenizer", None)
            if fresh is None or tok is None:
                self._why_not_whole = "no transformers model inside it to trace whole"
                return None
            self._plain = self._load_plain(fresh, tok, self.name)
        if self._plain is None:
            return None
        traced = self._plain.trace(text)
        n, size = traced.trace.n_layers, len(traced.tokens)
        worst = float("inf")
        # the bridge's tokenizer decides BOS (TransformerLens turns it on for its tokenizer); the cache run with
        # the same number of tokens is the one to compare with
        for bos in ({}, {"prepend_bos": False}):
            with torch.no_grad():
                _, cache = self.lens.run_with_cache(text, **bos)
            if tuple(cache["pattern", 0].shape[-2:]) == (size, size):
                worst = max(float(np.abs(traced.probs(i) - cache["pattern", i][0].float().cpu().numpy()).max())
                            for i in range(n))
                break
        if not worst <= 1e-5:
            self._plain, self._why_not_whole = None, (
                f"its transformers model's attention differs from the bridge's own by {worst:.2g}: "
                "processed weights?")
            return None
        traced.trace.meta["notice"] = (f"TransformerLens bridge: traced whole through its transformers model; "
                                       f"probabilities equal its cache within {max(worst, 1e-12):.1g}")
        return traced

    def __repr__(self) -> str:
        cfg = getattr(self.lens, "cfg", None)
        return f"<attnviz.Model {self.name!r} (TransformerLens), {cfg.n_layers} layers × {cfg.n_heads} heads>"
