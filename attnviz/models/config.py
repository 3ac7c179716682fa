"""The one configuration dataclass behind every model kind attnviz builds."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from attnviz.errors import ModelLoadError

__all__ = ["ModelConfig", "KINDS", "BUILT_POS", "DESCRIBED_POS"]

KINDS = ("encoder", "decoder", "encoder-decoder", "vit")
# position kinds attnviz builds, and those it only describes (Hugging Face models: build_model refuses them)
BUILT_POS = ("learned", "sinusoidal", "none")
DESCRIBED_POS = ("rotary", "relative", "alibi")
_HEADS = ("classify", "token-classify", "mlm", "lm")


@dataclass
class ModelConfig:
    """Architecture of one transformer.

    ``kind`` picks the family: a bidirectional text ``encoder``, a causal ``decoder``, an
    ``encoder-decoder`` (decoder blocks add cross-attention to the encoder output) or a vision
    transformer ``vit``. Everything else is shared so the what-if lab can flip one switch at a time.
    """

    kind: str = "encoder"
    vocab_size: int = 0  # source vocabulary (encoder / decoder / encoder side of enc-dec)
    tgt_vocab_size: int = 0  # decoder vocabulary of an encoder-decoder; 0 means "same as vocab_size"
    n_layers: int = 2
    n_dec_layers: int = 0  # decoder layers of an encoder-decoder; 0 means "same as n_layers"
    n_heads: int = 4
    n_kv_heads: int = 0  # 0 means "= n_heads" (plain multi-head); 1 is MQA; in between is GQA
    d_model: int = 64
    d_head: int = 0  # 0 means d_model // n_heads
    mlp_ratio: float = 4.0
    activation: str = "gelu"  # "gelu" | "relu"
    norm: str = "pre"  # "pre" (ViT, GPT-2) | "post" (original transformer: LN(x + MHSA(x)))
    pos: str = "learned"  # "learned" | "sinusoidal" | "none"; HF models also "rotary" | "relative" | "alibi"
    max_len: int = 128
    attn_bias: bool = True
    attn_scale: float = 0.0  # 0 means 1/sqrt(d_head)
    dropout: float = 0.0
    head: str = "classify"  # "classify" | "token-classify" | "mlm" | "lm"
    pool: str = "cls"  # for "classify": "cls" (token 0), "mean", or "index" (position given per example)
    n_classes: int = 2
    # vision transformer
    image_size: int = 32
    patch_size: int = 4
    in_chans: int = 3

    def __post_init__(self) -> None:
        self.validate()

    # -- derived sizes -------------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.d_head or self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads

    @property
    def scale(self) -> float:
        return self.attn_scale or 1.0 / math.sqrt(self.head_dim)

    @property
    def dec_layers(self) -> int:
        return self.n_dec_layers or self.n_layers

    @property
    def tgt_vocab(self) -> int:
        return self.tgt_vocab_size or self.vocab_size

    @property
    def causal(self) -> bool:
        return self.kind == "decoder"

    @property
    def grid(self) -> tuple[int, int]:
        side = self.image_size // self.patch_size
        return (side, side)

    @property
    def n_patches(self) -> int:
        return self.grid[0] * self.grid[1]

    # -- checks and (de)serialisation ---------------------------------------------------------
    def validate(self) -> None:
        def bad(msg: str) -> None:
            raise ModelLoadError(f"invalid model config: {msg}")

        if self.kind not in KINDS:
            bad(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.head not in _HEADS:
            bad(f"head {self.head!r} is not one of {', '.join(_HEADS)}")
        if self.pool not in ("cls", "mean", "index"):
            bad(f"pool {self.pool!r} must be cls, mean or index")
        if self.norm not in ("pre", "post"):
            bad(f"norm {self.norm!r} must be pre or post")
        if self.pos not in BUILT_POS + DESCRIBED_POS:
            bad(f"pos {self.pos!r} must be learned, sinusoidal or none")
        if self.activation not in ("gelu", "relu"):
            bad(f"activation {self.activation!r} must be gelu or relu")
        if self.n_layers < 1 or self.n_heads < 1 or self.d_model < 1:
            bad("n_layers, n_heads and d_model must be positive")
        if not self.d_head and self.d_model % self.n_heads:
            bad(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; set d_head")
        if self.n_heads % self.kv_heads:
            bad(f"n_heads={self.n_heads} must be a multiple of n_kv_heads={self.kv_heads}")
        if self.kind == "vit":
            if self.image_size % self.patch_size:
                bad(f"image_size={self.image_size} is not divisible by patch_size={self.patch_size}")
        elif self.vocab_size < 1:
            bad("text models need vocab_size >= 1")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ModelLoadError(f"invalid model config: unknown keys {', '.join(sorted(unknown))}")
        return cls(**data)
