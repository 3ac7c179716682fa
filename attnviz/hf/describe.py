"""A Hugging Face config described as attnviz's own :class:`~attnviz.models.config.ModelConfig`.

The rest of attnviz (selection limits, views, walkthrough, exports) reads ``loaded.config`` and a
trace's ``meta["config"]``; this gives it the same fields for an HF model: kind, layers, heads, sizes,
pre- or post-LN, head type, patch grid. No transformers import: any object with the config's
attributes (or ``transformers.PretrainedConfig``) will do.
"""

from __future__ import annotations

from attnviz.capture.description import TraceDescription
from attnviz.errors import ModelLoadError
from attnviz.hf.families import Family, family_of
from attnviz.models.config import ModelConfig

__all__ = ["head_of", "kind_of", "positions_of", "position_kind", "describe_model", "trace_description",
           "norm_type_of", "activation_of", "true_config", "EMB_SUM"]

# what a Hugging Face trace's emb.sum holds (``meta["emb_sum"]``): not always token + position embeddings
EMB_SUM = "the residual stream entering layer 0 (after the embeddings' own LayerNorm, if any)"

# families whose "LayerNorm" is an RMSNorm (no mean subtraction) though their config names no rms_norm_eps
_RMS_FAMILIES = ("t5", "mt5", "umt5", "longt5", "switch_transformers")

# architecture name endings → attnviz head names (what ``prediction`` holds)
_HEADS = (("ForMaskedLM", "mlm"), ("LMHeadModel", "lm"), ("ForCausalLM", "lm"),
          ("ForSequenceClassification", "classify"), ("ForImageClassification", "classify"),
          ("ForImageClassificationWithTeacher", "classify"), ("ForTokenClassification", "token-classify"))


def head_of(architecture: str) -> str:
    """"mlm", "lm", "classify", "token-classify", or "none" (a base model or another head)."""
    return next((head for end, head in _HEADS if architecture.endswith(end)), "none")


def kind_of(hf_config, architecture: str, family: Family | None = None) -> str:
    """"encoder", "decoder" or "vit" (encoder–decoders are refused by the loader before this)."""
    if family is not None:
        return family.kind
    if getattr(hf_config, "image_size", None) and getattr(hf_config, "patch_size", None):
        return "vit"
    if head_of(architecture) == "lm" or getattr(hf_config, "is_decoder", False):
        return "decoder"
    return "encoder"


def positions_of(hf_config, family: Family | None = None) -> int:
    """How many token positions the model's position table allows (0 when it has no table)."""
    # MPT states its ALiBi length as max_seq_len (no position table, but the bias it builds has that many columns)
    n = getattr(hf_config, "max_position_embeddings", None) or getattr(hf_config, "n_positions", None) \
        or getattr(hf_config, "max_seq_len", None) or 0
    if n and family is not None and family.pos_after_pad:
        n -= int(getattr(hf_config, "pad_token_id", 1) or 0) + 1  # RoBERTa counts positions from pad_id + 1
    return int(n)


_RELATIVE = ("t5", "mt5", "umt5", "longt5", "switch_transformers", "deberta", "deberta-v2")
_SINUSOIDAL = ("marian", "pegasus", "fsmt", "speech_to_text")
_ALIBI = ("bloom", "mpt")


def position_kind(hf_config) -> str:
    """How the model tells positions apart: "learned", "sinusoidal", "rotary", "relative" (a learned bias
    per distance added to the scores), "alibi" (a fixed linear bias per distance), or "none"."""
    model_type = str(getattr(hf_config, "model_type", "") or "").lower()
    attn_config = getattr(hf_config, "attn_config", None)
    if model_type in _ALIBI or getattr(hf_config, "alibi", False) or getattr(attn_config, "alibi", False):
        return "alibi"
    if model_type in _RELATIVE or str(getattr(hf_config, "position_embedding_type", "")).startswith("relative"):
        return "relative"
    if getattr(hf_config, "rope_parameters", None) or getattr(hf_config, "rotary_dim", None) \
            or getattr(hf_config, "rope_theta", None):
        return "rotary"
    if model_type in _SINUSOIDAL or getattr(hf_config, "sinusoidal_pos_embds", False):
        return "sinusoidal"
    if getattr(hf_config, "max_position_embeddings", None) or getattr(hf_config, "n_positions", None) \
            or getattr(hf_config, "image_size", None):
        return "learned"
    return "none"


def _one_or_list(values: list):
    """A value the layers share, or the list per layer when they differ."""
    return values[0] if len(set(values)) == 1 else values


def trace_description(hf_config, cfg: ModelConfig, facts: list, probs_list: list, generic: bool) -> TraceDescription:
    """What the run computed about attention (heads, scale, soft-cap, windows, positions, what is missing), as
    the :class:`TraceDescription` the capture completes. ``facts``: one
    :class:`attnviz.hf.layer_arrays.LayerFacts` per layer (None for a layer kept as probabilities only)."""
    H = int(probs_list[0].shape[1])
    known = [f for f in facts if f is not None]
    kv = known[0].n_kv_heads if known else int(getattr(hf_config, "num_key_value_heads", None) or H)
    first = known[0] if known else None
    per_layer = [f or first for f in facts]  # a layer kept as probabilities only: described as the first
    scales = [f.scale for f in per_layer if f is not None] or [cfg.head_dim ** -0.5]
    caps = [f.softcap for f in per_layer if f is not None]
    windows = [f.sliding_window for f in per_layer if f is not None]
    rotary, position = None, position_kind(hf_config)
    if any(f.rotary_dims for f in known):
        position = "rotary"
        rope = getattr(hf_config, "rope_parameters", None) or {}
        rotary = {"dims": max(f.rotary_dims for f in known), "d_head": cfg.head_dim,
                  "theta": rope.get("rope_theta") if isinstance(rope, dict) else None,
                  "convention": "rotate_half: dimension d pairs with d + d_rot/2"}
    missing = list(dict.fromkeys(m for f in known for m in f.missing))
    if not generic:
        missing = ["x, q, k, v, z, W_O: attention probabilities only, the model computes attention itself, not "
                   "through transformers' attention interface"]
    elif len(known) < len(facts):
        # "layers 0–29", not thirty numbers: the whole list read like a failure on a page that asked for
        # probabilities only
        spans: list[list[int]] = []
        for i in (i for i, f in enumerate(facts) if f is None):
            if spans and i == spans[-1][1] + 1:
                spans[-1][1] = i
            else:
                spans.append([i, i])
        named = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in spans)
        missing.append(f"x, q, k, v, z of layers {named} (kept as probabilities only, enough for this figure)")
    cap = _one_or_list(caps) if caps else None
    return TraceDescription(
        config=true_config(hf_config, cfg), n_heads=H, n_kv_heads=kv or None, scale=float(scales[0]),
        layer_scales=tuple(float(s) for s in scales) if len(set(scales)) > 1 else None,  # GPT-2 scaled by layer
        softcap=tuple(cap) if isinstance(cap, list) else cap, sliding_window=tuple(windows) if any(windows) else None,
        position=position, rotary=rotary, qkv_available=bool(known) and not known[0].missing,
        qk_norm=True if any(f.qk_norm for f in known) else None,
        additive_bias=True if any(f.bias for f in known) else None, missing=tuple(missing))


def norm_type_of(hf_config) -> str:
    """"rmsnorm" for a model that normalises with RMSNorm (Llama, Qwen, Mistral, Gemma: their configs
    state ``rms_norm_eps``; T5's layer norm is an RMSNorm too), else "layernorm"."""
    if getattr(hf_config, "rms_norm_eps", None) is not None:
        return "rmsnorm"
    return "rmsnorm" if str(getattr(hf_config, "model_type", "")).lower() in _RMS_FAMILIES else "layernorm"


def activation_of(hf_config) -> str:
    """The MLP activation as the config names it ("silu" for Llama, "gelu_new" for GPT-2, "gelu" for
    BERT); "gelu" when the config states none."""
    for name in ("hidden_act", "activation_function", "hidden_activation", "dense_act_fn", "activation"):
        value = getattr(hf_config, name, None)
        if isinstance(value, str) and value:
            return value
    return "gelu"


def true_config(hf_config, cfg: ModelConfig) -> dict:
    """``cfg.to_dict()`` for a trace's ``meta["config"]``, with the model's real activation and its kind of
    norm (``norm_type``): :class:`ModelConfig` only knows the activations and norms attnviz builds itself."""
    return {**cfg.to_dict(), "activation": activation_of(hf_config), "norm_type": norm_type_of(hf_config)}


def _size(value) -> int:
    """An image/patch size that configs store as int or (h, w); attnviz needs square ones."""
    if isinstance(value, (list, tuple)):
        if len(set(value)) != 1:
            raise ModelLoadError(f"non-square sizes ({value}) are not supported")
        value = value[0]
    return int(value)


def describe_model(hf_config, architecture: str, max_len: int | None = None) -> ModelConfig:
    """The ModelConfig that describes an HF model (used for display, selection limits and trace meta).

    Parameters
    ----------
    hf_config : ``transformers.PretrainedConfig`` (or an object with the same attributes).
    architecture : class name, e.g. "BertForMaskedLM".
    max_len : usable text positions (default: the model's position table).
    """
    family = family_of(getattr(hf_config, "model_type", None))
    kind = kind_of(hf_config, architecture, family)
    try:
        n_heads, d_model, n_layers = hf_config.num_attention_heads, hf_config.hidden_size, hf_config.num_hidden_layers
        if isinstance(n_heads, (list, tuple)):  # stages with their own heads (Swin): the first stage is shown
            n_heads, d_model, n_layers = n_heads[0], hf_config.embed_dim, hf_config.depths[0]
        n_heads, d_model, n_layers = int(n_heads), int(d_model), int(n_layers)
    except (AttributeError, TypeError, ValueError):
        raise ModelLoadError(f"{architecture}: the config does not state its layers, heads and hidden size") from None
    d_head = int(getattr(hf_config, "head_dim", None) or d_model // max(n_heads, 1))
    inner = getattr(hf_config, "intermediate_size", None) or getattr(hf_config, "n_inner", None) \
        or getattr(hf_config, "hidden_dim", None) or 4 * d_model
    act = activation_of(hf_config)
    head = head_of(architecture)
    fields = dict(
        kind=kind, n_layers=n_layers, n_heads=n_heads, d_model=d_model, d_head=d_head,
        n_kv_heads=int(getattr(hf_config, "num_key_value_heads", None) or n_heads),
        mlp_ratio=float(inner) / d_model, activation="relu" if act == "relu" else "gelu",
        norm=family.norm if family is not None else "pre",
        pos=position_kind(hf_config),
        attn_bias=bool(getattr(hf_config, "attention_bias", True)), head="classify" if head == "none" else head,
        n_classes=int(getattr(hf_config, "num_labels", 2) or 2),
    )
    if kind == "vit":
        image, patch = _size(hf_config.image_size), _size(hf_config.patch_size)
        fields.update(image_size=image, patch_size=patch, in_chans=int(getattr(hf_config, "num_channels", 3)),
                      max_len=(image // patch) ** 2 + 2, vocab_size=0)
    else:
        fields.update(vocab_size=int(getattr(hf_config, "vocab_size", 0) or 0),
                      max_len=int(max_len or positions_of(hf_config, family) or 512))
    return ModelConfig(**fields)
