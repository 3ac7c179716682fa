"""Where each supported Hugging Face family keeps its attention parts (module paths, no torch import).

A path is dotted and relative: ``layers`` to the base model (``model.base_model``, e.g. ``BertModel``),
everything per layer to one block of ``layers``. ``*`` stands for every child of a ModuleList (ALBERT
nests its shared layers in groups). Paths follow transformers 5; :func:`attnviz.hf.capture.capture_hf`
checks that each one resolves before it trusts the family, and falls back to probabilities only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Family", "FAMILIES", "family_of"]


@dataclass(frozen=True)
class Family:
    """How to read one family's attention with forward hooks.

    Attributes
    ----------
    name : shown to the user ("BERT").
    kind : attnviz model kind: "encoder", "decoder" or "vit".
    norm : "post" (LayerNorm after the residual sum: BERT) or "pre" (GPT-2, ViT).
    layers : path of the blocks, relative to the base model.
    attn : module whose output is ``(…, probs)`` and whose ``attention_mask`` argument is the mask.
    q, k, v : separate projections; ``qkv`` instead for a fused one (GPT-2's ``c_attn``: x W, W (D, 3D)).
    o : output projection: its input is concat(z), its output is ``out``.
    h : (path, "in" | "out"): where the residual stream after the attention sub-layer is read.
    word, pos : token and position embedding modules (or, for ``pos``, a parameter) of the base model.
    patch : the patch-embedding convolution (vision).
    prefix : labels of the tokens a vision model puts before the patches.
    pos_after_pad : positions start after the padding id (RoBERTa), which shortens the usable length.
    """

    name: str
    kind: str
    norm: str
    layers: str
    attn: str
    o: str
    h: tuple[str, str]
    q: str = ""
    k: str = ""
    v: str = ""
    qkv: str = ""
    word: str = ""
    pos: str = ""
    patch: str = ""
    prefix: tuple[str, ...] = ()
    pos_after_pad: bool = False

    @property
    def projections(self) -> tuple[str, ...]:
        return (self.qkv,) if self.qkv else (self.q, self.k, self.v)


_BERT = dict(kind="encoder", norm="post", layers="encoder.layer.*", attn="attention.self",
             q="attention.self.query", k="attention.self.key", v="attention.self.value",
             o="attention.output.dense", h=("attention", "out"),
             word="embeddings.word_embeddings", pos="embeddings.position_embeddings")
_VIT = dict(kind="vit", norm="pre", layers="layers.*", attn="attention", q="attention.q_proj",
            k="attention.k_proj", v="attention.v_proj", o="attention.o_proj", h=("layernorm_after", "in"),
            pos="embeddings.position_embeddings", patch="embeddings.patch_embeddings.projection")

FAMILIES: dict[str, Family] = {
    "bert": Family("BERT", **_BERT),
    "roberta": Family("RoBERTa", **_BERT, pos_after_pad=True),
    "distilbert": Family("DistilBERT", kind="encoder", norm="post", layers="transformer.layer.*", attn="attention",
                         q="attention.q_lin", k="attention.k_lin", v="attention.v_lin", o="attention.out_lin",
                         h=("sa_layer_norm", "out"), word="embeddings.word_embeddings",
                         pos="embeddings.position_embeddings"),
    "albert": Family("ALBERT", kind="encoder", norm="post", layers="encoder.albert_layer_groups.*.albert_layers.*",
                     attn="attention", q="attention.query", k="attention.key", v="attention.value",
                     o="attention.dense", h=("attention", "out"), word="embeddings.word_embeddings",
                     pos="embeddings.position_embeddings"),
    "gpt2": Family("GPT-2", kind="decoder", norm="pre", layers="h.*", attn="attn", qkv="attn.c_attn",
                   o="attn.c_proj", h=("ln_2", "in"), word="wte", pos="wpe"),
    "vit": Family("ViT", **_VIT, prefix=("[CLS]",)),
    "deit": Family("DeiT", **_VIT, prefix=("[CLS]", "[DIST]")),
}


def family_of(model_type: str | None) -> Family | None:
    """The family with full Q/K/V capture for a config's ``model_type``, or None (probabilities only)."""
    return FAMILIES.get(str(model_type or "").lower())
