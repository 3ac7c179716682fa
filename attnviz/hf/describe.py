"""A Hugging Face config described as attnviz's own :class:`~attnviz.models.config.ModelConfig`.

The rest of attnviz (selection limits, views, walkthrough, exports) reads ``loaded.config`` and a
trace's ``meta["config"]``; this gives it the same fields for an HF model: kind, layers, heads, sizes,
pre- or post-LN, head type, patch grid. No transformers import: any object with the config's
attributes (or ``transformers.PretrainedConfig``) will do.
"""

from __future__ import annotations

from attnviz.errors import ModelLoadError
from attnviz.hf.families import Family, family_of
from attnviz.models.config import ModelConfig

__all__ = ["head_of", "kind_of", "positions_of", "describe_model"]

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
    n = getattr(hf_config, "max_position_embeddings", None) or getattr(hf_config, "n_positions", None) or 0
    if n and family is not None and family.pos_after_pad:
        n -= int(getattr(hf_config, "pad_token_id", 1) or 0) + 1  # RoBERTa counts positions from pad_id + 1
    return int(n)


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
        n_heads = int(hf_config.num_attention_heads)
        d_model = int(hf_config.hidden_size)
        n_layers = int(hf_config.num_hidden_layers)
    except (AttributeError, TypeError, ValueError):
        raise ModelLoadError(f"{architecture}: the config does not state its layers, heads and hidden size") from None
    d_head = int(getattr(hf_config, "head_dim", None) or d_model // max(n_heads, 1))
    inner = getattr(hf_config, "intermediate_size", None) or getattr(hf_config, "n_inner", None) \
        or getattr(hf_config, "hidden_dim", None) or 4 * d_model
    act = str(getattr(hf_config, "hidden_act", None) or getattr(hf_config, "activation_function", None)
              or getattr(hf_config, "activation", "gelu"))
    head = head_of(architecture)
    rotary = getattr(hf_config, "rope_theta", None) or getattr(hf_config, "rope_parameters", None)
    fields = dict(
        kind=kind, n_layers=n_layers, n_heads=n_heads, d_model=d_model, d_head=d_head,
        n_kv_heads=int(getattr(hf_config, "num_key_value_heads", None) or n_heads),
        mlp_ratio=float(inner) / d_model, activation="relu" if act == "relu" else "gelu",
        norm=family.norm if family is not None else "pre",
        pos="none" if rotary else "learned",
        attn_bias=True, head="classify" if head == "none" else head,
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
