"""Build a model from its config; list the attention modules of any model kind."""

from __future__ import annotations

from torch import nn

from attnviz.models.config import ModelConfig

__all__ = ["build_model", "attention_layers"]


def build_model(cfg: ModelConfig) -> nn.Module:
    from attnviz.errors import ModelLoadError
    from attnviz.models.config import DESCRIBED_POS
    from attnviz.models.text import EncoderDecoder, TextDecoder, TextEncoder
    from attnviz.models.vision import VisionTransformer

    if cfg.pos in DESCRIBED_POS:  # a Hugging Face model's description, not something attnviz can build
        raise ModelLoadError(f"invalid model config: attnviz builds models with learned, sinusoidal or no "
                             f"positions, not {cfg.pos!r}")
    cls = {"encoder": TextEncoder, "decoder": TextDecoder, "encoder-decoder": EncoderDecoder,
           "vit": VisionTransformer}[cfg.kind]
    return cls(cfg)


def attention_layers(model: nn.Module) -> dict[str, list]:
    """The blocks of a model by role: {"main": [...], "enc": [...]}.

    "main" are the blocks whose attention is the model's headline view: the only stack of an
    encoder/decoder/ViT, the decoder stack of an encoder–decoder (with cross-attention).
    """
    if hasattr(model, "decoder"):
        return {"main": list(model.decoder.blocks), "enc": list(model.encoder.blocks)}
    return {"main": list(model.stack.blocks)}
