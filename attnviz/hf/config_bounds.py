"""Sizes a Hugging Face ``config.json`` may state, checked before transformers builds anything.

transformers builds a model's skeleton on the meta device from its config: no tensor memory, but every
layer's Python objects, so ``num_hidden_layers: 10000000`` grows past 3 GB before any later check could
refuse it. Every count and size a config of any family states (nested ``text_config`` / ``vision_config`` /
``encoder`` / ``decoder`` sections included) is bounded here, in one pass over the already-bounded JSON.
"""

from __future__ import annotations

import math

from attnviz.errors import ModelLoadError
from attnviz.models.validate import LIMITS

__all__ = ["check_config_sizes", "SIZE_LIMITS"]

_LAYERS = (1, LIMITS["n_layers"][1])
_HEADS = (1, 1024)
_WIDTH = (1, 65_536)
# key → (low, high); the names every supported family uses for the same few facts
SIZE_LIMITS = {
    **dict.fromkeys(("num_hidden_layers", "num_layers", "n_layer", "n_layers", "num_decoder_layers",
                     "num_encoder_layers", "encoder_layers", "decoder_layers"), (0, _LAYERS[1])),
    **dict.fromkeys(("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
                     "decoder_attention_heads", "num_key_value_heads"), (0, _HEADS[1])),
    **dict.fromkeys(("hidden_size", "d_model", "n_embd", "dim", "d_kv", "head_dim", "embed_dim"), (0, _WIDTH[1])),
    **dict.fromkeys(("intermediate_size", "d_ff", "n_inner", "hidden_dim", "encoder_ffn_dim", "decoder_ffn_dim",
                     "ffn_dim"), (0, 4 * _WIDTH[1])),
    "vocab_size": (0, 4_000_000),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len"), (0, 16_777_216)),
    **dict.fromkeys(("image_size", "patch_size", "num_channels", "num_labels"), (0, 1_000_000)),
}
_MAX_NODES = 1_000_000  # a config is a few hundred values; the bounded reader already capped its size


def check_config_sizes(doc, where: str) -> None:
    """Raise :class:`ModelLoadError` (one line) when a count or size anywhere in ``doc`` is out of range
    or not a whole number."""
    stack = [doc]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > _MAX_NODES:
            raise ModelLoadError(f"{where}: config.json holds more than {_MAX_NODES:,} values")
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                stack.append(value)
            elif key in SIZE_LIMITS and value is not None:
                _check(key, value, SIZE_LIMITS[key], where)


def _check(key: str, value, limits: tuple[int, int], where: str) -> None:
    low, high = limits
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)  # 12.0 is what some exporters write for 12
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelLoadError(f"{where}: config.json's {key} must be a whole number, not {str(value)[:40]!r}")
    if not low <= value <= high:
        raise ModelLoadError(f"{where}: config.json's {key} is {value:,}, outside {low}..{high:,} "
                             "(no model attnviz can show has that many)")
