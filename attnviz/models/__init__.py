"""Model family: configuration, attention, blocks, text and vision transformers, checkpoints."""

from attnviz.models.config import ModelConfig
from attnviz.models.registry import build_model

__all__ = ["ModelConfig", "build_model"]
