"""Bundled sample images: listed by name, loadable, and exactly what the generator writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnviz.models.config import ModelConfig
from attnviz.tasks.sample_images import write_samples
from attnviz.vision.preprocess import load_image, preprocess_image
from attnviz.vision.samples import PHOTOS, photos, sample_images, sample_path, samples_dir

DIGITS = [f"digit-{d}" for d in range(10)]
SHAPES = ["shapes-circle", "shapes-square", "shapes-triangle", "shapes-cross", "shapes-star", "shapes-star-offcentre"]


def test_every_sample_is_listed_and_loads():
    found = sample_images()
    assert set(DIGITS + SHAPES + ["china", "flower"]) <= set(found)
    for name, path in found.items():
        assert path.is_file(), name
        img = load_image(path)
        assert img.width > 0 and img.height > 0
    assert load_image(found["digit-0"]).size == (16, 16) and load_image(found["digit-0"]).mode == "L"
    assert load_image(found["shapes-star"]).size == (32, 32) and load_image(found["shapes-star"]).mode == "RGB"
    assert load_image(found["china"]).size == (640, 427)
    assert sample_path("no-such-sample") is None


def test_photos_are_shipped_with_their_credits():
    found = photos()
    assert set(found) == set(PHOTOS) == {"china", "flower"}
    assert sorted(p.name for p in samples_dir().glob("*.jpg")) == ["china.jpg", "flower.jpg"]
    credits = (samples_dir().parent / "ATTRIBUTION.md").read_text(encoding="utf-8")
    for name in PHOTOS:
        assert f"samples/{name}.jpg" in credits
    assert credits.count("CC BY 2.0") >= 2


def test_photos_are_scikit_learns_unchanged():
    from importlib.util import find_spec

    spec = find_spec("sklearn")
    if spec is None or spec.origin is None:
        pytest.skip("scikit-learn is not installed")
    for name, path in photos().items():
        original = Path(spec.origin).parent / "datasets" / "images" / f"{name}.jpg"
        assert path.read_bytes() == original.read_bytes(), name


def test_bundled_pngs_are_what_the_generator_writes_now(tmp_path):
    written = write_samples(tmp_path)
    assert sorted(p.stem for p in written) == sorted(DIGITS + SHAPES)
    for path in written:
        bundled = samples_dir() / path.name
        np.testing.assert_array_equal(np.asarray(load_image(path)), np.asarray(load_image(bundled)), err_msg=path.name)
        assert path.stat().st_size < 4096  # small files


def test_a_photo_goes_through_both_vision_preprocessings():
    path = sample_path("flower")
    for cfg in (ModelConfig(kind="vit", image_size=32, patch_size=4, in_chans=3, n_classes=5),
                ModelConfig(kind="vit", image_size=16, patch_size=4, in_chans=1, n_classes=10)):
        tensor, shown = preprocess_image(path, cfg)
        assert tensor.shape == (1, cfg.in_chans, cfg.image_size, cfg.image_size)
        assert np.isfinite(shown).all() and shown.std() > 0.01
