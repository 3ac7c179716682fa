"""Load and preprocess images for a vision transformer; name the patches."""

from __future__ import annotations

import os

import numpy as np

from attnviz.errors import InputError

__all__ = ["load_image", "preprocess_image", "patch_labels", "MAX_PIXELS"]

MAX_PIXELS = 80_000_000  # refuse decompression bombs with a clear message instead of a MemoryError


def load_image(image):
    """A PIL image from a path, a PIL image or an (H, W[, C]) array (uint8 or floats in [0, 1])."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(image, Image.Image):
        return image
    if isinstance(image, np.ndarray):
        arr = image
        if arr.dtype != np.uint8:
            arr = (np.clip(arr.astype(np.float64), 0, 1) * 255).round().astype(np.uint8)
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        if arr.ndim not in (2, 3):
            raise InputError(f"an image array must be (H, W) or (H, W, C), not {image.shape}")
        return Image.fromarray(arr)
    path = os.fspath(image)
    try:
        with Image.open(path) as img:
            if img.width * img.height > MAX_PIXELS:
                raise InputError(f"{path} is {img.width}×{img.height} pixels: too large to open")
            img.load()
            return img.copy()
    except FileNotFoundError:
        raise InputError(f"image file not found: {path}") from None
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise InputError(f"cannot decode image {path}: {exc}") from None


def preprocess_image(image, cfg, preprocess: dict | None = None):
    """Resize to the model's input size and normalise.

    Returns (tensor (1, C, S, S), shown (S, S, C) in [0, 1]) — ``shown`` is what the model saw,
    used for overlays so the patch grid lines up with the pixels.
    """
    import torch
    from PIL import Image

    img = load_image(image)
    mode = "L" if cfg.in_chans == 1 else "RGB"
    img = img.convert(mode)
    prep = preprocess or {}
    size = cfg.image_size
    if img.size != (size, size):
        # centre-crop to a square first, so shapes are not squashed
        side = min(img.size)
        left, top = (img.width - side) // 2, (img.height - side) // 2
        img = img.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    if arr.ndim == 2:
        arr = arr[:, :, None]
    mean = np.asarray(prep.get("mean", [0.5] * cfg.in_chans), dtype=np.float32)
    std = np.asarray(prep.get("std", [0.5] * cfg.in_chans), dtype=np.float32)
    norm = (arr - mean) / std
    tensor = torch.from_numpy(np.ascontiguousarray(norm.transpose(2, 0, 1)))[None]  # (1, C, S, S)
    return tensor, arr


def patch_labels(grid: tuple[int, int]) -> list[str]:
    """Position labels: "[CLS]" then "r,c" for each patch in row-major order."""
    return ["[CLS]"] + [f"{r},{c}" for r in range(grid[0]) for c in range(grid[1])]
