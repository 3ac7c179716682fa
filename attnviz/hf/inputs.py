"""Text and images prepared the way a Hugging Face model expects (its own tokenizer and image processor).

Both return :class:`attnviz.capture.Prepared`, so ``runtime.run_trace`` continues as for attnviz's
own models. Text longer than the model's positions is refused, or truncated by the tokenizer's own
rule (closing special token kept) with a visible notice.
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError
from attnviz.text.fit import too_long

__all__ = ["prepare_hf_text", "prepare_hf_image", "vision_tokens"]


def prepare_hf_text(loaded, text: str, truncate: bool = False):
    """Tokenize ``text`` with the model's tokenizer → ``Prepared({"input_ids": (1, T)}, tokens)``."""
    import torch

    from attnviz.capture.prepared import Prepared

    if loaded.config.kind == "vit":
        raise InputError(f"{loaded.name} is a vision model: give it an image, not text")
    if text is None or not str(text).strip():
        raise InputError("the text is empty: type a sentence")
    tok, limit = loaded.tokenizer, loaded.config.max_len
    enc = tok.encode(text)
    meta = {}
    if len(enc.ids) > limit:
        if not truncate:
            raise InputError(too_long("the text", len(enc.ids), loaded.name, limit))
        n = len(enc.ids)
        enc = tok.encode(text, max_length=limit)
        meta["notice"] = f"the text was truncated to the model's {limit:,} positions (it had {n:,} tokens)"
    ids = torch.tensor([enc.ids], device=loaded.device)
    return Prepared({"input_ids": ids}, list(enc.tokens), meta=meta)


def vision_tokens(loaded) -> list[str]:
    """Position labels: the family's prefix tokens ([CLS], DeiT's [DIST]) then "r,c" per patch."""
    from attnviz.hf.families import family_of

    gh, gw = loaded.config.grid
    family = family_of(loaded.info.get("model_type"))
    prefix = list(family.prefix) if family is not None else ["[CLS]"]
    return prefix + [f"{r},{c}" for r in range(gh) for c in range(gw)]


def _shown(pixels: np.ndarray, processor) -> np.ndarray:
    """What the model saw, back in [0, 1] (H, W, C): undo the processor's normalisation and rescale."""
    img = pixels.transpose(1, 2, 0).astype(np.float64)  # (C, S, S) → (S, S, C)
    if getattr(processor, "do_normalize", False):
        img = img * np.asarray(processor.image_std, np.float64) + np.asarray(processor.image_mean, np.float64)
    if not getattr(processor, "do_rescale", True):
        img = img / 255.0
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def prepare_hf_image(loaded, image):
    """Preprocess with the model's own image processor (size, crop, mean, std from preprocessor_config.json).

    A folder without ``preprocessor_config.json`` gets the config's image size with ViT's default
    mean = std = 0.5, and a notice saying so.
    """
    import torch

    from attnviz.capture.prepared import Prepared
    from attnviz.vision.preprocess import load_image, preprocess_image, to_model_mode

    cfg = loaded.config
    if cfg.kind != "vit":
        raise InputError(f"{loaded.name} is a text model: give it text, not an image")
    processor = loaded.extra.get("processor")
    meta = {}
    if processor is None:
        half = [0.5] * cfg.in_chans
        tensor, shown = preprocess_image(image, cfg, {"mean": half, "std": half})
        meta["notice"] = (f"{loaded.name} has no preprocessor_config.json: the image was resized to "
                          f"{cfg.image_size}×{cfg.image_size} and normalised with mean = std = 0.5")
    else:
        img = to_model_mode(load_image(image), cfg.in_chans)  # any mode/depth → L or RGB
        try:
            tensor = processor(images=img, return_tensors="pt")["pixel_values"].float()  # (1, C, S, S)
        except (ValueError, TypeError, OSError) as exc:
            raise InputError(f"the model's image processor cannot read this image: {exc}") from None
        if tuple(tensor.shape[-2:]) != (cfg.image_size, cfg.image_size):
            raise InputError(f"the image processor makes {tensor.shape[-1]}×{tensor.shape[-2]} images but "
                             f"{loaded.name} takes {cfg.image_size}×{cfg.image_size}: check preprocessor_config.json")
        shown = _shown(tensor[0].numpy(), processor)
    inputs = {"pixel_values": torch.as_tensor(tensor).to(loaded.device)}
    return Prepared(inputs, vision_tokens(loaded), image=shown, meta=meta)
