"""What the generic capture cannot find by itself in a few Hugging Face families (no torch import).

Attention itself is read generically (:mod:`attnviz.hf.attention_record`): every family that calls
transformers' attention interface. What remains per family is what has no common name: the token and
position embedding modules of the base model (``emb.token``, ``emb.pos``), the patch embedding and
prefix tokens of vision models, and for post-LN models the module whose output is the residual stream
after the attention sub-layer. Paths are dotted, relative to ``model.base_model`` (embeddings) or to
one block (``h``); a path that does not resolve leaves that array out.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Family", "FAMILIES", "family_of"]


@dataclass(frozen=True)
class Family:
    """Per-family facts the generic capture needs.

    Attributes
    ----------
    name : shown to the user ("BERT").
    kind : attnviz model kind: "encoder", "decoder" or "vit".
    norm : "post" (LayerNorm after the residual sum: BERT) or "pre" (GPT-2, ViT, Llama).
    h : post-LN only: (path in a block, "in" | "out") where the stream after attention is read.
    word, pos : token and position embedding modules (or, for ``pos``, a parameter) of the base model.
    patch : the patch-embedding convolution (vision).
    prefix : labels of the tokens a vision model puts before the patches.
    pos_after_pad : positions start after the padding id (RoBERTa), which shortens the usable length.
    """

    name: str
    kind: str
    norm: str = "pre"
    h: tuple[str, str] | None = None
    word: str = ""
    pos: str = ""
    patch: str = ""
    prefix: tuple[str, ...] = ()
    pos_after_pad: bool = False


_BERT = dict(kind="encoder", norm="post", h=("attention", "out"), word="embeddings.word_embeddings",
             pos="embeddings.position_embeddings")
_VIT = dict(kind="vit", pos="embeddings.position_embeddings", patch="embeddings.patch_embeddings.projection")

FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", **_BERT),
    "roberta": Family("RoBERTa", **_BERT, pos_after_pad=True),
    "distilbert": Family("DistilBERT", kind="encoder", norm="post", h=("sa_layer_norm", "out"),
                         word="embeddings.word_embeddings", pos="embeddings.position_embeddings"),
    "albert": Family("ALBERT", kind="encoder", norm="post", h=("attention", "out"), word="embeddings.word_embeddings",
                     pos="embeddings.position_embeddings"),
    "gpt2": Family("GPT-2", kind="decoder", word="wte", pos="wpe"),
    "opt": Family("OPT", kind="decoder", word="decoder.embed_tokens", pos="decoder.embed_positions"),
    "vit": Family("ViT", **_VIT, prefix=("[CLS]",)),
    "deit": Family("DeiT", **_VIT, prefix=("[CLS]", "[DIST]")),
}


def family_of(model_type: str | None) -> Family | None:
    """The per-family facts for a config's ``model_type``, or None (the generic capture alone)."""
    return FAMILIES.get(str(model_type or "").lower())
