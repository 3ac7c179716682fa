"""A transformers model object already in memory, as the same :class:`LoadedModel` a folder gives.

Notebook users fine-tune, patch and quantise models in memory; :func:`wrap_hf_model` describes such an
object the way :func:`attnviz.hf.loader.load_hf_model` describes a folder (same ``info``, same
``ModelConfig``) without touching it: no ``.to()``, no ``.eval()``, no attribute set on it.
:func:`preserved_model` is held around every capture of such a model, so the attention implementation,
train/eval flags, parameter gradients and hooks are what they were afterwards.
"""

from __future__ import annotations

from contextlib import contextmanager

from attnviz.errors import ModelLoadError
from attnviz.hf.private_names import attn_implementation

__all__ = ["wrap_hf_model", "is_hf_model", "preserved_model", "model_state"]

_HINT = "pass a transformers model, a folder or a bundled name"


def is_hf_model(obj) -> bool:
    """Whether ``obj`` is a ``transformers.PreTrainedModel`` (without importing transformers for others)."""
    import sys

    tf = sys.modules.get("transformers")
    return tf is not None and isinstance(obj, tf.PreTrainedModel)


def _wrap_tokenizer(tokenizer, vocab_size: int, name: str):
    from attnviz.hf.tokenizer import HFTokenizer

    if tokenizer is None:
        raise ModelLoadError(f"{name} is a text model: pass its tokenizer too (attnviz.load(model, tokenizer=tok))")
    hf = getattr(tokenizer, "tokenizer", tokenizer)  # a processor wraps its tokenizer
    if not callable(getattr(hf, "get_vocab", None)):
        raise ModelLoadError(f"tokenizer= must be a transformers tokenizer, not {type(tokenizer).__name__}")
    return HFTokenizer(hf, vocab_size)


def _image_processor(processor):
    if processor is None:
        return None  # the config's image size with ViT's default mean/std (a notice says so)
    return getattr(processor, "image_processor", processor)


def wrap_hf_model(model, tokenizer=None, processor=None, name: str | None = None):
    """Describe a transformers model object for tracing, leaving it exactly as it is.

    Parameters
    ----------
    model : a ``transformers.PreTrainedModel`` (any family a folder can hold: encoders, decoders, ViT,
        encoder–decoders).
    tokenizer : its tokenizer (text models); a processor holding one will do.
    processor : its image processor (vision models); None: the config's size, mean = std = 0.5.
    name : what the trace calls the model (default: its class name).

    Returns
    -------
    LoadedModel with ``info["source"] == "huggingface"`` and ``extra["in_memory"] = True`` (the runtime's
    Hugging Face adapter then captures inside :func:`preserved_model`).
    """
    from attnviz.hf.attention_record import is_attention_module
    from attnviz.hf.describe import describe_model, head_of, positions_of
    from attnviz.hf.encdec_model import describe_encdec, encdec_positions, is_encoder_decoder
    from attnviz.hf.families import family_of
    from attnviz.hf.loader import _labels, require_transformers  # the folder loader's own rules
    from attnviz.models.checkpoint import LoadedModel

    tf = require_transformers("a transformers model")
    if not isinstance(model, tf.PreTrainedModel):
        raise ModelLoadError(f"cannot load a {type(model).__name__}: {_HINT}")
    config, arch = model.config, type(model).__name__
    if getattr(config, "auto_map", None) and type(model).__module__.startswith("transformers_modules"):
        raise ModelLoadError(f"{arch} runs its own Python code (trust_remote_code): attnviz reads transformers' "
                             "own model classes")
    main_input = getattr(model, "main_input_name", "input_ids")
    if main_input not in ("input_ids", "pixel_values"):
        raise ModelLoadError(f"{arch} takes {main_input}: attnviz opens text and image models")
    model_type = str(getattr(config, "model_type", "") or "")
    family = family_of(model_type)
    interface = any(is_attention_module(m) for m in model.modules())
    seq2seq = is_encoder_decoder(config)
    vision = main_input == "pixel_values"
    tok = None if vision else _wrap_tokenizer(tokenizer, int(getattr(config, "vocab_size", 0) or 0), arch)
    if seq2seq:
        cfg = describe_encdec(config, arch, max_len=encdec_positions(config, tok.max_length), model=model)
    else:
        limits = [n for n in (positions_of(config, family), tok and tok.max_length) if n]
        cfg = describe_model(config, arch, max_len=min(limits) if limits else None)
    head = "lm" if seq2seq else head_of(arch)
    param = next(model.parameters(), None)
    info = {"name": name or arch, "source": "huggingface", "task": None, "architecture": arch,
            "family": family.name if family is not None else model_type, "model_type": model_type, "head": head,
            "labels": _labels(config, head), "qkv_available": interface, "transformers": tf.__version__,
            "in_memory": True}
    extra = {"processor": _image_processor(processor) if vision else None, "in_memory": True}
    return LoadedModel(model=model, config=cfg, info=info, tokenizer=tok, path=None,
                       device=param.device if param is not None else None, extra=extra)


def model_state(model) -> dict:
    """What a capture must leave as it found: attention implementation, dtype and device of every parameter,
    train/eval of every module, gradients (by identity), ``requires_grad``, hooks, and instance attributes."""
    params = list(model.named_parameters())
    hooks = {name: tuple(len(getattr(m, h)) for h in _HOOK_DICTS if hasattr(m, h))
             for name, m in model.named_modules()}
    return {
        "attn_implementation": attn_implementation(model.config),
        "params": [(n, p.dtype, p.device, p.requires_grad, id(p.grad) if p.grad is not None else None)
                   for n, p in params],
        "training": [(n, m.training) for n, m in model.named_modules()],
        "hooks": hooks,
        "attributes": sorted(vars(model)),
    }


_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
               "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs")


@contextmanager
def preserved_model(model, cfg=None):
    """Hold around a capture (or a greedy decode) of a user's model: inside, the model is in eval mode (a
    trace shows the model's own deterministic computation, not one dropout draw) and ``cfg`` is set as
    ``model.cfg`` (the encoder–decoder capture reads it); every change is undone afterwards: parameter
    gradients (a gradient capture zeroes and fills them), train/eval flags, the attention implementation,
    and attributes added."""
    attributes = set(vars(model))
    grads = [(p, p.grad) for p in model.parameters()]
    training = [(m, m.training) for m in model.modules()]
    implementation = attn_implementation(model.config)
    had_cfg = "cfg" in vars(model)
    old_cfg = vars(model).get("cfg")
    if cfg is not None:
        object.__setattr__(model, "cfg", cfg)  # a plain attribute, not a registered submodule
    try:
        model.eval()
        yield model
    finally:
        for p, g in grads:
            p.grad = g
        for m, was in training:
            m.training = was
        if implementation is not None and attn_implementation(model.config) != implementation:
            model.set_attn_implementation(implementation)
        for extra in set(vars(model)) - attributes:
            object.__delattr__(model, extra)
        if had_cfg:
            object.__setattr__(model, "cfg", old_cfg)
