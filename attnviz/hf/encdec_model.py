"""Hugging Face encoder–decoders (T5, BART, Marian, mBART, Pegasus, …): which class to load, and the
:class:`~attnviz.models.config.ModelConfig` that describes one the way attnviz describes its own
``translate`` model (kind ``encoder-decoder``: ``n_layers`` counts the encoder, ``n_dec_layers`` the
decoder). No transformers import here: any object with the config's attributes will do.
"""

from __future__ import annotations

from attnviz.errors import ModelLoadError
from attnviz.hf.describe import position_kind
from attnviz.hf.private_names import model_class_for
from attnviz.models.config import ModelConfig

__all__ = ["is_encoder_decoder", "encdec_class", "describe_encdec", "encdec_positions", "encdec_position_kind"]


def is_encoder_decoder(hf_config) -> bool:
    return bool(getattr(hf_config, "is_encoder_decoder", False))


def encdec_class(tf, architecture: str, config):
    """The class to load: the folder's architecture when it has a language-model head (it writes tokens),
    else the seq2seq-LM class transformers maps the config to (a base ``T5Model`` / ``BartModel`` folder:
    the head is tied to the shared embeddings, so the weights still fit; a head they lack is reported by
    the loader's missing-weights check)."""
    cls = getattr(tf, architecture, None) if architecture else None
    if architecture and cls is None:
        raise ModelLoadError(f"unsupported architecture {architecture!r}: transformers {tf.__version__} has no "
                             "such model")
    if cls is not None and hasattr(cls, "generate") and "ConditionalGeneration" in cls.__name__ \
            or cls is not None and cls.__name__.endswith("MTModel"):
        return cls
    try:
        return model_class_for(tf.AutoModelForSeq2SeqLM, config)
    except (KeyError, AttributeError):
        name = architecture or getattr(config, "model_type", "?")
        raise ModelLoadError(f"{name} is an encoder–decoder without a language-model head transformers knows: "
                             "attnviz needs one to show what the decoder writes") from None


def encdec_position_kind(hf_config, model=None) -> str:
    """:func:`attnviz.hf.describe.position_kind`, corrected by the model's own position module when there is
    one: a sinusoidal table (M2M-100, NLLB, …: ``*SinusoidalPositionalEmbedding``) is "sinusoidal"."""
    kind = position_kind(hf_config)
    if model is not None and kind == "learned":
        table = getattr(model.get_encoder(), "embed_positions", None)
        if table is not None and "Sinusoidal" in type(table).__name__:
            return "sinusoidal"
    return kind


def encdec_positions(hf_config, tokenizer_limit: int | None = None) -> int:
    """Token positions the model takes: its position table, or (relative positions: no table) the
    tokenizer's limit, else 512 (T5's training length)."""
    n = 0 if position_kind(hf_config) == "relative" else int(getattr(hf_config, "max_position_embeddings", 0) or 0)
    limits = [v for v in (n, tokenizer_limit) if v]
    return int(min(limits)) if limits else 512


def _int(config, *names, default=None):
    for name in names:
        value = getattr(config, name, None)
        if value:
            return int(value)
    if default is None:
        raise ModelLoadError(f"the config does not state {names[0]}")
    return int(default)


def describe_encdec(hf_config, architecture: str, max_len: int | None = None, model=None) -> ModelConfig:
    """The ModelConfig of an encoder–decoder (display, selection limits, trace meta); ``model`` (loaded)
    lets its own position module name the position kind."""
    try:
        d_model = _int(hf_config, "hidden_size", "d_model")
        enc_layers = _int(hf_config, "encoder_layers", "num_layers", "num_hidden_layers")
        dec_layers = _int(hf_config, "decoder_layers", "num_decoder_layers", default=enc_layers)
        heads = _int(hf_config, "encoder_attention_heads", "num_heads", "num_attention_heads")
        dec_heads = _int(hf_config, "decoder_attention_heads", "num_heads", default=heads)
    except ModelLoadError as exc:
        raise ModelLoadError(f"{architecture}: {exc}") from None
    if dec_heads != heads:  # every view of a trace reads one head count for all three parts
        raise ModelLoadError(f"{architecture} has {heads} encoder heads but {dec_heads} decoder heads; attnviz "
                             "shows encoder–decoders whose parts have the same number of heads")
    d_head = _int(hf_config, "d_kv", "head_dim", default=d_model // max(heads, 1))
    ffn = _int(hf_config, "d_ff", "encoder_ffn_dim", "intermediate_size", default=4 * d_model)
    act = str(getattr(hf_config, "dense_act_fn", None) or getattr(hf_config, "activation_function", None) or "gelu")
    vocab = _int(hf_config, "vocab_size")
    pre_ln = getattr(hf_config, "model_type", "") not in ("bart", "marian")  # post-LN: BART and Marian
    return ModelConfig(
        kind="encoder-decoder", vocab_size=vocab, tgt_vocab_size=_int(hf_config, "decoder_vocab_size", default=vocab),
        n_layers=enc_layers, n_dec_layers=dec_layers, n_heads=heads, d_model=d_model, d_head=d_head,
        mlp_ratio=float(ffn) / d_model, activation="relu" if act == "relu" else "gelu",
        norm="pre" if pre_ln else "post", pos=encdec_position_kind(hf_config, model),  # T5: "relative" (a bias on the scores)
        attn_bias=position_kind(hf_config) != "relative", head="lm",  # T5's projections have no bias
        max_len=int(max_len or encdec_positions(hf_config)))
