"""Every private (underscore) name of transformers that attnviz reads, in one place (no transformers import here).

transformers gives no public route to these facts; each accessor below names one private attribute, so a
transformers release that renames it breaks one function here (and the test of that name,
``tests/hf/test_private_names.py``) rather than code spread over the package.

Supported versions: transformers 5.18 (the lower bound in pyproject.toml) to 5.24 (installed when this was written);
the tests check every name at the installed version and, in a subprocess, at the lowest supported one.

=================================  ==========================================================================
name                               what attnviz reads from it
=================================  ==========================================================================
``Auto*._model_mapping``           the model class for a config when the folder names no architecture
``PreTrainedModel._can_record_outputs``  whether a model class returns attention maps (``"attentions"``)
``config._attn_implementation``    the attention function a model runs on (restored after a capture)
``FalconAttention._split_heads``   Falcon's fused query/key/value layout (read on column numbers)
``BloomAttention._reshape``        Bloom's fused query/key/value layout
``GPTNeoSelfAttention._split_heads``  GPT-Neo's (T, H·dh) → (H, T, dh) split
=================================  ==========================================================================
"""

from __future__ import annotations

__all__ = ["NAMES", "model_class_for", "records_attentions", "attn_implementation", "falcon_split_heads",
           "bloom_reshape", "gpt_neo_split_heads"]

# (transformers object, private attribute): what the tests check at both ends of the supported versions
NAMES = (("AutoModel", "_model_mapping"), ("AutoModelForSeq2SeqLM", "_model_mapping"),
         ("PreTrainedModel subclass", "_can_record_outputs"), ("PretrainedConfig of a loaded model", "_attn_implementation"),
         ("FalconAttention", "_split_heads"), ("BloomAttention", "_reshape"), ("GPTNeoSelfAttention", "_split_heads"))


def model_class_for(auto_class, config):
    """The model class ``auto_class`` (``AutoModel``, ``AutoModelForSeq2SeqLM``) maps ``config`` to.

    Raises KeyError (no class for this config) or AttributeError (this transformers has no such mapping)."""
    return auto_class._model_mapping[type(config)]


def records_attentions(model_class) -> bool:
    """Whether ``model_class`` lists attention maps among the outputs it can record (``output_attentions``)."""
    return "attentions" in (getattr(model_class, "_can_record_outputs", None) or {})


def attn_implementation(config) -> str | None:
    """The name of the attention function the model of ``config`` runs on ("eager", "sdpa", attnviz's own …)."""
    return getattr(config, "_attn_implementation", None)


def falcon_split_heads(module):
    """Falcon's own split of its fused ``query_key_value`` output into (query, key, value)."""
    return module._split_heads


def bloom_reshape(module):
    """Bloom's own split of its fused ``query_key_value`` output into (query, key, value)."""
    return module._reshape


def gpt_neo_split_heads(module):
    """GPT-Neo's own ``(B, T, H·dh) → (B, H, T, dh)`` split, called as ``f(tensor, H, dh)``."""
    return module._split_heads
