"""Attention probabilities a user already has (``output_attentions``, BertViz, CircuitsVis, a cache) → a Trace.

BertViz takes ``head_view(attention, tokens)`` with a tuple of per-layer (batch, heads, T, T) tensors, as
``model(..., output_attentions=True).attentions`` returns; CircuitsVis takes ``attention_patterns(tokens,
attention)`` with one layer's (heads, T, T); TransformerLens stacks them as (layers, batch, heads, T, T).
:func:`from_attentions` takes each as it comes (torch or NumPy, either argument order), checks it (finite,
within [0, 1], rows summing to 1, the token count) and gives the views probabilities alone allow; the others
refuse in one line naming what they need.
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError

__all__ = ["from_attentions", "attention_stack", "PROBS_VIEWS", "needs_of"]

# views drawn from probabilities (and tokens) alone
PROBS_VIEWS = ("head-map", "model", "token-lines", "rollout", "attention-distance", "causal-mask")
_NEEDS = {"steps": "q, k and v (the walkthrough)", "matrix-form": "q, k and v", "many-heads": "q, k, v and z",
          "matrix-z": "q, k, v and z", "qk-embedding": "q and k", "scale-reason": "q and k",
          "token-pca": "the embeddings", "pos-encoding": "the positional embeddings",
          "pos-similarity": "the positional embeddings", "filters-pca": "the patch-embedding weights",
          "what-if": "the model itself", "permutation": "the model itself",
          "word-order": "the model itself"}
_ROW_TOLERANCE = 1e-3  # float16 attentions sum to 1 within ~5e-4 over a few hundred keys


def needs_of(view: str) -> str:
    """What a view needs beyond probabilities (for the one-line refusal)."""
    return _NEEDS.get(view, "more than attention probabilities")


def _numpy(x, what: str) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor (any dtype, device, with or without grad)
        x = x.detach().float().cpu().numpy()
    try:
        a = np.array(x, dtype=np.float32)  # a copy: the caller's array is never shared with the trace
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be arrays or tensors of numbers: {exc}") from None
    return a


def attention_stack(attentions, what: str = "attentions") -> np.ndarray:
    """Any accepted layout → (layers, heads, Tq, Tk) float32 (a fresh copy).

    A tuple/list of per-layer (1, H, Tq, Tk) or (H, Tq, Tk); an array (L, H, Tq, Tk), (L, 1, H, Tq, Tk) or
    one layer's (H, Tq, Tk) (CircuitsVis).
    """
    if attentions is None:
        raise InputError(f"{what} is None: pass model(..., output_attentions=True).attentions")
    if callable(getattr(attentions, "stack_activation", None)):  # a TransformerLens ActivationCache
        attentions = attentions.stack_activation("pattern")  # (L, 1, H, T, T)
    if isinstance(attentions, (list, tuple)):
        if not attentions:
            raise InputError(f"{what} is empty: one (1, heads, T, T) map per layer expected")
        layers = [_numpy(a, what) for a in attentions]
        layers = [a[0] if a.ndim == 4 and a.shape[0] == 1 else a for a in layers]
        if any(a.ndim == 4 for a in layers):
            raise InputError(f"{what} hold a batch of {layers[0].shape[0]}: pass one input's maps "
                             "([a[i:i+1] for a in attentions])")
        if any(a.ndim != 3 for a in layers):
            raise InputError(f"each layer of {what} must be (1, heads, T, T) or (heads, T, T), not "
                             f"{next(a.shape for a in layers if a.ndim != 3)}")
        if len({a.shape for a in layers}) != 1:
            raise InputError(f"the layers of {what} differ in shape ({', '.join(str(a.shape) for a in layers[:3])}…): "
                             "one heads × T × T map per layer expected")
        return np.stack(layers)  # (L, H, Tq, Tk)
    a = _numpy(attentions, what)
    if a.ndim == 5 and a.shape[1] == 1:
        a = a[:, 0]  # (L, 1, H, Tq, Tk), TransformerLens' stacked pattern
    elif a.ndim == 3:
        a = a[None]  # one layer's (H, Tq, Tk), CircuitsVis
    if a.ndim != 4:
        raise InputError(f"{what} of shape {a.shape}: expected (layers, heads, T, T), one (heads, T, T) layer, "
                         "or a tuple of (1, heads, T, T) per layer")
    return a


def _check(stack: np.ndarray, n_rows: int, n_cols: int, what: str) -> None:
    _, _, tq, tk = stack.shape
    if (tq, tk) != (n_rows, n_cols):
        raise InputError(f"{what} are {tq}×{tk} maps but there are {n_rows} query and {n_cols} key tokens: "
                         "give one token per position")
    if not np.isfinite(stack).all():
        raise InputError(f"{what} hold NaN or infinite values: attention probabilities are finite")
    if stack.min() < -1e-6 or stack.max() > 1 + 1e-6:
        raise InputError(f"{what} hold values outside [0, 1] ({stack.min():.3g} to {stack.max():.3g}): pass "
                         "probabilities (after the softmax), not scores")
    worst = float(np.abs(stack.sum(axis=-1, dtype=np.float64) - 1.0).max())
    if worst > _ROW_TOLERANCE:
        raise InputError(f"rows of {what} must sum to 1 (one sums to {1 + worst:.4g} or {1 - worst:.4g}): pass "
                         "each query's softmax over the keys, for one input without padding")


def _tokens(tokens, what: str) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise InputError(f"{what} must be a list of str (one label per position), "
                         f"not {type(tokens).__name__}")
    return list(tokens)


def _is_causal(stack: np.ndarray) -> bool:
    tq, tk = stack.shape[-2:]
    return tq == tk and tq > 1 and float(np.abs(np.triu(stack, k=1)).max()) == 0.0


def from_attentions(attentions, tokens, cross_attentions=None, encoder_attentions=None, src_tokens=None,
                    causal: bool | None = None, name: str = "attentions"):
    """Attention probabilities and their tokens → a :class:`~attnviz.api.Traced` (no model).

    Parameters
    ----------
    attentions : what ``output_attentions`` returns (a tuple of (1, H, T, T) per layer), an (L, H, T, T)
        array, TransformerLens' (L, 1, H, T, T), or one layer's (H, T, T) (CircuitsVis); torch or NumPy.
        For an encoder–decoder: the decoder's self-attention.
    tokens : one label per position (``tokenizer.convert_ids_to_tokens(ids)``). BertViz's and CircuitsVis'
        argument orders are both accepted.
    cross_attentions, encoder_attentions, src_tokens : an encoder–decoder's cross-attention (L, H, T, T_src),
        its encoder's self-attention, and the source tokens.
    causal : whether queries see only earlier keys (default: read from the maps' upper triangle).
    name : what the figures call the model.

    Returns
    -------
    Traced whose figures are those probabilities alone allow (:data:`PROBS_VIEWS`); the others refuse in
    one line naming what they need.

    Examples
    --------
    >>> import numpy as np, attnviz
    >>> maps = np.full((2, 3, 4, 4), 0.25)            # 2 layers, 3 heads, 4 tokens
    >>> t = attnviz.from_attentions(maps, ["a", "b", "c", "d"])
    >>> t.probs(1).shape
    (3, 4, 4)
    >>> attnviz.from_attentions(maps * 5, ["a", "b", "c", "d"])
    Traceback (most recent call last):
    ...
    attnviz.errors.InputError: attentions hold values outside [0, 1] (1.25 to 1.25): pass probabilities (after the softmax), not scores
    """
    from attnviz.api.traced import Traced
    from attnviz.capture.description import TraceDescription
    from attnviz.capture.finish import finish_trace
    from attnviz.capture.trace import layer_prefix

    if isinstance(attentions, (list, tuple)) and attentions and all(isinstance(t, str) for t in attentions):
        attentions, tokens = tokens, attentions  # CircuitsVis order: (tokens, attention)
    tokens = _tokens(tokens, "tokens")
    stack = attention_stack(attentions)
    _check(stack, len(tokens), len(tokens), "attentions")
    arrays, n_heads = {}, stack.shape[1]
    parts = {"self": stack}
    src = None
    if cross_attentions is not None or encoder_attentions is not None:
        if cross_attentions is None or encoder_attentions is None or src_tokens is None:
            raise InputError("an encoder–decoder needs cross_attentions, encoder_attentions and src_tokens together")
        src = _tokens(src_tokens, "src_tokens")
        parts["cross"] = attention_stack(cross_attentions, "cross_attentions")
        _check(parts["cross"], len(tokens), len(src), "cross_attentions")
        parts["enc"] = attention_stack(encoder_attentions, "encoder_attentions")
        _check(parts["enc"], len(src), len(src), "encoder_attentions")
        if len(parts["cross"]) != len(stack):
            raise InputError(f"cross_attentions has {len(parts['cross'])} layers, attentions {len(stack)}: one "
                             "cross-attention map per decoder layer expected")
    if len({p.shape[1] for p in parts.values()}) != 1:
        raise InputError("every part must have the same number of heads")
    for part, layers in parts.items():
        for i, probs in enumerate(layers):
            arrays[layer_prefix(i, part) + "probs"] = probs  # (H, Tq, Tk)
    causal = _is_causal(stack) if causal is None else bool(causal)
    if causal:
        t = len(tokens)
        mask = np.triu(np.full((t, t), -np.inf, dtype=np.float32), k=1)  # (T, T) additive
        for i in range(len(stack)):
            arrays[layer_prefix(i, "self") + "mask"] = mask
    if src is not None:
        arrays["src_tokens"] = np.array(src, dtype=str)
    kind = "encoder-decoder" if src is not None else ("decoder" if causal else "encoder")
    description = TraceDescription(
        kind=kind, n_layers=len(stack), n_enc_layers=len(parts["enc"]) if src is not None else 0, n_heads=n_heads,
        causal=causal, model_name=str(name), source="attentions", qkv_available=False, precision="float32",
        missing=("x, q, k, v, z, embeddings: given attention probabilities only",),
        notice="attention probabilities given by the caller: views needing q, k, v or the model refuse")
    return Traced(finish_trace(tokens, arrays, description))
