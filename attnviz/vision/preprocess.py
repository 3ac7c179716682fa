"""Load and preprocess images for a vision transformer; name the patches.

Whatever the user gives — a path, a PIL image or an array; grey, RGBA, palette, 16-bit or CMYK —
becomes the 8-bit L or RGB square the model was trained on, plus the [0, 1] picture that was shown to
it (for overlays). Problems the user can fix (missing, undecodable or enormous files, odd arrays)
raise :class:`~attnviz.errors.InputError` with a one-line message.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from attnviz.errors import InputError

__all__ = ["load_image", "to_model_mode", "normalise", "preprocess_image", "patch_labels", "MAX_PIXELS",
           "ImageTooLargeError"]

MAX_PIXELS = 80_000_000  # refuse decompression bombs with a clear message instead of a MemoryError


def _array_to_uint8(arr: np.ndarray) -> np.ndarray:
    """Integers scale by their dtype's range (uint16 → /257), bools to 0/255, floats are read as [0, 1]."""
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype == np.bool_:
        return arr.astype(np.uint8) * 255
    if np.issubdtype(arr.dtype, np.integer):
        info = np.iinfo(arr.dtype)
        lo = 0 if info.min < 0 else info.min  # negative values of signed ints clip to black
        return (np.clip(arr.astype(np.float64), lo, info.max) / info.max * 255).round().astype(np.uint8)
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise InputError("the image array contains NaN or infinite values")
        return (np.clip(arr.astype(np.float64), 0, 1) * 255).round().astype(np.uint8)
    raise InputError(f"an image array must hold numbers, not {arr.dtype}")


class ImageTooLargeError(InputError):
    """An image with more pixels than attnviz opens (a folder of inputs skips it; one input is refused)."""


def _image_from_array(image: np.ndarray):
    from PIL import Image

    arr = np.asarray(image)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (2, 3, 4)):
        raise InputError(f"an image array must be (H, W) or (H, W, C) with C in 1–4, not {image.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"the image array is empty ({image.shape})")
    if arr.shape[0] * arr.shape[1] > MAX_PIXELS:
        raise ImageTooLargeError(f"the image array is {arr.shape[1]}×{arr.shape[0]} pixels: too large "
                                 f"(more than {MAX_PIXELS:,})")
    arr = np.ascontiguousarray(_array_to_uint8(arr))
    if arr.ndim == 2:
        return Image.fromarray(arr, "L")
    return Image.fromarray(arr, {2: "LA", 3: "RGB", 4: "RGBA"}[arr.shape[2]])


def _open_file(image):
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        path = os.fspath(image)
    except TypeError:
        raise InputError(f"cannot read an image from a {type(image).__name__}: give a path, PIL image or array") from None
    if os.path.isdir(path):
        raise InputError(f"{path} is a directory, not an image file")
    try:
        with warnings.catch_warnings():
            # PIL warns (rather than raises) between MAX_IMAGE_PIXELS and twice that: make it an error
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                if img.width * img.height > MAX_PIXELS:
                    raise ImageTooLargeError(f"{path} is {img.width}×{img.height} pixels: too large to open")
                img.load()
                # phone photos store their rotation in EXIF; show them the way up the user sees them
                return ImageOps.exif_transpose(img) or img.copy()
    except FileNotFoundError:
        raise InputError(f"image file not found: {path}") from None
    except PermissionError:
        raise InputError(f"no permission to read image file {path}") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageTooLargeError(f"{path} is too large to open (more than {MAX_PIXELS:,} pixels)") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        # SyntaxError and ValueError are what some PIL plug-ins raise on corrupt headers
        raise InputError(f"cannot decode image {path}: {exc}") from None


def load_image(image):
    """A PIL image from a path, a PIL image or an (H, W[, C]) array.

    Arrays: uint8 as is; other integer types scaled by their range (uint16 → 0–65535); floats in [0, 1].
    """
    from PIL import Image

    if isinstance(image, Image.Image):
        # bounded as a file is: a 20000×20000 image from a notebook would otherwise grow to GBs when converted
        if image.width * image.height > MAX_PIXELS:
            raise ImageTooLargeError(f"the image is {image.width}×{image.height} pixels: too large "
                                     f"(more than {MAX_PIXELS:,})")
        return image
    if isinstance(image, np.ndarray):
        return _image_from_array(image)
    return _open_file(image)


def _high_bit_depth_to_l(img):
    """Scale 16/32-bit integer and float grey images to 8 bits (PIL's own convert clips at 255)."""
    from PIL import Image

    arr = np.asarray(img)
    if img.mode == "F":
        arr = arr.astype(np.float64)
        if not np.isfinite(arr).all():
            raise InputError("the image contains NaN or infinite values")
        top = 1.0 if arr.max(initial=0) <= 1.0 else 255.0  # [0, 1] float images vs 0–255 ones
        out = np.clip(arr / top, 0, 1) * 255
    else:
        # "I;16*" are 16-bit; "I" holds 16-bit PNGs too, and rarely true 32-bit data
        top = 65535.0 if img.mode.startswith("I;16") or arr.max(initial=0) <= 65535 else float(arr.max())
        out = np.clip(arr.astype(np.float64), 0, None) / top * 255
    return Image.fromarray(out.round().astype(np.uint8), "L")


def to_model_mode(img, in_chans: int, matte=(1.0, 1.0, 1.0)):
    """Convert any PIL mode to "L" (1 channel) or "RGB" (3); transparency is composited onto ``matte``.

    Parameters
    ----------
    img : PIL.Image.Image, any mode.
    in_chans : 1 or 3, the channels the model takes.
    matte : background colour in [0, 1] (1 or 3 values) behind transparent pixels.
    """
    from PIL import Image

    if in_chans not in (1, 3):
        raise InputError(f"models with {in_chans} input channels are not supported (1 or 3)")
    if img.mode in ("I", "F") or img.mode.startswith("I;16"):
        img = _high_bit_depth_to_l(img)
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in ("PA", "La"):
        img = img.convert("RGBA")
    if img.mode in ("RGBA", "LA", "RGBa"):
        rgba = img.convert("RGBA")
        colour = np.broadcast_to(np.asarray(matte, dtype=np.float64).reshape(-1), (3,))
        back = Image.new("RGBA", rgba.size, tuple(int(round(c * 255)) for c in colour) + (255,))
        img = Image.alpha_composite(back, rgba).convert("RGB")
    return img.convert("L" if in_chans == 1 else "RGB")


def normalise(pixels: np.ndarray, mean, std):
    """(N, S, S, C) or (S, S, C) values in [0, 1] → float32 tensor (N, C, S, S) normalised per channel."""
    import torch

    arr = np.asarray(pixels, dtype=np.float32)
    batch = arr if arr.ndim == 4 else arr[None]  # (N, S, S, C)
    m = np.asarray(mean, dtype=np.float32)
    s = np.asarray(std, dtype=np.float32)
    norm = (batch - m) / s
    return torch.from_numpy(np.ascontiguousarray(norm.transpose(0, 3, 1, 2)))  # (N, C, S, S)


def _invert_if_light(arr: np.ndarray) -> np.ndarray:
    """Flip a light-background picture to dark (models trained on light ink on black, e.g. digits)."""
    border = np.concatenate([arr[0].ravel(), arr[-1].ravel(), arr[:, 0].ravel(), arr[:, -1].ravel()])
    return 1.0 - arr if float(np.median(border)) > 0.5 else arr


def preprocess_image(image, cfg, preprocess: dict | None = None):
    """Resize to the model's input size and normalise.

    Parameters
    ----------
    image : path, PIL image or array (see :func:`load_image`).
    cfg : the model's ModelConfig (``image_size``, ``in_chans``).
    preprocess : the checkpoint's ``preprocess`` dict: ``mean`` and ``std`` per channel, optional
        ``matte`` (colour behind transparent pixels, default white) and ``background: "dark"``
        (invert pictures whose border is light).

    Returns
    -------
    (tensor (1, C, S, S), shown (S, S, C) in [0, 1]) — ``shown`` is what the model saw, used for
    overlays so the patch grid lines up with the pixels.
    """
    from PIL import Image

    prep = preprocess or {}
    img = to_model_mode(load_image(image), cfg.in_chans, prep.get("matte", (1.0, 1.0, 1.0)))
    size = cfg.image_size
    if img.size != (size, size):
        # centre-crop to a square first, so shapes are not squashed
        side = min(img.size)
        left, top = (img.width - side) // 2, (img.height - side) // 2
        img = img.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    if arr.ndim == 2:
        arr = arr[:, :, None]  # (S, S, 1)
    if prep.get("background") == "dark":
        arr = _invert_if_light(arr)
    mean = prep.get("mean", [0.5] * cfg.in_chans)
    std = prep.get("std", [0.5] * cfg.in_chans)
    return normalise(arr, mean, std), arr


def patch_labels(grid: tuple[int, int]) -> list[str]:
    """Position labels: "[CLS]" then "r,c" for each patch in row-major order."""
    return ["[CLS]"] + [f"{r},{c}" for r in range(grid[0]) for c in range(grid[1])]
