"""``digits``: a small ViT on scikit-learn's 8×8 handwritten digits (shipped with the package).

The 8×8 images (17 grey levels) are enlarged to 16×16 by pixel repetition and cut into 4×4 patches:
a 4×4 grid, so every patch covers 2×2 of the original pixels and the attention maps stay readable.
Training draws random ±1-pixel shifts (half an original pixel), which is what gets a ViT this small
past 98 % on 1 437 training images.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task
from attnviz.vision.preprocess import normalise

__all__ = ["DigitsTask", "digit_images", "split_indices", "shift_images", "IMAGE_SIZE"]

IMAGE_SIZE = 16
SPLIT_SEED = 1797  # fixed, not the task seed: a model and its evaluation must agree on the held-out set
N_TEST = 360  # 20 % of the 1 797 images, 36 of each class
MEAN, STD = 0.30, 0.38  # of the training pixels in [0, 1] (rounded; stored in the checkpoint)


@lru_cache(maxsize=1)
def digit_images() -> tuple[np.ndarray, np.ndarray]:
    """All 1 797 digits as uint8 (N, 16, 16) images (ink bright on black) and their labels (N,)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    grey = np.round(data.images * (255.0 / 16.0)).astype(np.uint8)  # (N, 8, 8), 0..16 → 0..255
    big = grey.repeat(2, axis=1).repeat(2, axis=2)  # (N, 16, 16): each pixel becomes a 2×2 block
    big.setflags(write=False)
    return big, data.target.astype(np.int64)


@lru_cache(maxsize=1)
def split_indices() -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices into :func:`digit_images`: a stratified split, fixed once for all."""
    _, labels = digit_images()
    rng = np.random.default_rng(SPLIT_SEED)
    per_class = N_TEST // 10
    test = np.concatenate([rng.permutation(np.flatnonzero(labels == c))[:per_class] for c in range(10)])
    test.sort()
    train = np.setdiff1d(np.arange(len(labels)), test)
    return train, test


def shift_images(images: np.ndarray, rng: np.random.Generator, max_shift: int = 1) -> np.ndarray:
    """Shift each (N, S, S) image by a random whole number of pixels in [-max_shift, max_shift], filling black."""
    n, s, _ = images.shape
    pad = max_shift
    padded = np.zeros((n, s + 2 * pad, s + 2 * pad), dtype=images.dtype)
    padded[:, pad : pad + s, pad : pad + s] = images
    dy, dx = rng.integers(0, 2 * pad + 1, size=(2, n))
    rows = dy[:, None] + np.arange(s)  # (N, S) source rows of each output row
    cols = dx[:, None] + np.arange(s)
    return padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]  # (N, S, S)


def jitter_images(images: np.ndarray, rng: np.random.Generator, degrees: float = 10.0, scale: float = 0.1,
                  shift: float = 1.0) -> np.ndarray:
    """Random small rotation, zoom and shift of (N, S, S) uint8 images → (N, S, S) floats in [0, 1].

    Bilinear resampling with black outside the frame (the digits' background).
    """
    import torch.nn.functional as F

    n, s, _ = images.shape
    ang = np.deg2rad(rng.uniform(-degrees, degrees, n))
    zoom = rng.uniform(1 - scale, 1 + scale, n)
    tx, ty = rng.uniform(-shift, shift, (2, n)) * 2 / s  # pixels → the [-1, 1] grid coordinates
    cos, sin = np.cos(ang) / zoom, np.sin(ang) / zoom
    theta = np.stack([np.stack([cos, -sin, tx], 1), np.stack([sin, cos, ty], 1)], 1)  # (N, 2, 3)
    src = torch.from_numpy(images.astype(np.float32) / 255.0)[:, None]  # (N, 1, S, S)
    grid = F.affine_grid(torch.from_numpy(theta.astype(np.float32)), list(src.shape), align_corners=False)
    out = F.grid_sample(src, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    return out[:, 0].numpy()  # (N, S, S)


class DigitsTask(Task):
    name = "digits"
    kind = "vit"
    description = "Handwritten digits 0–9 (scikit-learn, 8×8 shown as 16×16): a 4×4 grid of patches"
    steps = 700
    batch_size = 64
    lr = 4e-3
    warmup = 40
    weight_decay = 0.05
    labels = [str(d) for d in range(10)]
    targets = {"accuracy": (">=", 0.98)}
    n_train = 1797 - N_TEST
    max_shift = 1  # pixels of random shift in training batches
    augment = "shift"

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="vit", image_size=IMAGE_SIZE, patch_size=4, in_chans=1, d_model=64, n_heads=4,
                   n_layers=3, mlp_ratio=2.0, norm="pre", pos="sinusoidal", head="classify", pool="cls",
                   n_classes=10, dropout=0.0)
        cfg.update(overrides)
        return ModelConfig(**cfg)

    @staticmethod
    def _tensor(images_u8: np.ndarray) -> torch.Tensor:
        return normalise(images_u8[..., None].astype(np.float32) / 255.0, [MEAN], [STD])  # (N, 1, S, S)

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        images, labels = digit_images()
        train, test = split_indices()
        pool = train if split == "train" else test
        idx = rng.choice(pool, size=batch_size)
        batch = images[idx]
        if split == "train" and self.augment == "affine":
            pixels = jitter_images(batch, rng)
            tensor = normalise(pixels[..., None], [MEAN], [STD])
        else:
            if split == "train":
                batch = shift_images(batch, rng, self.max_shift)
            tensor = self._tensor(batch)
        return Batch({"images": tensor}, torch.from_numpy(labels[idx]), batch_size)

    @torch.no_grad()
    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Accuracy on the whole held-out split (``seed`` is unused: the split is fixed)."""
        images, labels = digit_images()
        _, test = split_indices()
        model = loaded.model
        was_training = model.training
        model.eval()
        try:
            preds = [model(self._tensor(images[chunk]).to(loaded.device)).argmax(-1).cpu().numpy()
                     for chunk in np.array_split(test, max(1, len(test) // 256))]
        finally:
            model.train(was_training)
        correct = int((np.concatenate(preds) == labels[test]).sum())
        return {"accuracy": correct / len(test), "n_test": int(len(test))}

    def probe_inputs(self) -> list:
        """The first held-out image of each class, as uint8 (16, 16) arrays."""
        images, labels = digit_images()
        _, test = split_indices()
        return [images[test[labels[test] == c][0]] for c in range(10)]

    def example_input(self):
        from attnviz.vision.samples import sample_path

        return sample_path("digit-3") or self.probe_inputs()[3]

    def info(self) -> dict:
        return {"labels": self.labels, "preprocess": {"mean": [MEAN], "std": [STD], "matte": [0.0],
                                                      "background": "dark"}}
