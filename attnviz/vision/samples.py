"""Sample images the app offers for the vision models.

``assets/samples/`` holds small PNGs written by :func:`attnviz.tasks.sample_images.write_samples`
(deterministic: held-out digits and held-out shape scenes, so a sample is never a training image); scikit-learn's two
sample photos (``china``, ``flower``) are listed by name from the installed package, not copied.

Regenerate the PNGs with ``python -m attnviz.tasks.sample_images``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["sample_images", "sample_path", "samples_dir", "sklearn_photos"]

SKLEARN_PHOTOS = ("china", "flower")


def samples_dir() -> Path:
    """The bundled samples folder (inside the assets folder, which ``ATTNVIZ_ASSETS`` may move)."""
    from attnviz.io import assets_dir

    return assets_dir() / "samples"


def sklearn_photos() -> dict[str, Path]:
    """scikit-learn's sample photos (427×640 JPEGs) by name; empty if scikit-learn is not installed."""
    spec = importlib.util.find_spec("sklearn")  # locates the package without importing it
    if spec is None or spec.origin is None:
        return {}
    folder = Path(spec.origin).parent / "datasets" / "images"
    return {name: folder / f"{name}.jpg" for name in SKLEARN_PHOTOS if (folder / f"{name}.jpg").is_file()}


def sample_images() -> dict[str, Path]:
    """Every sample by name: the bundled PNGs (``digit-0`` … ``shapes-star``), then ``china`` and ``flower``."""
    folder = samples_dir()
    found = {p.stem: p for p in sorted(folder.glob("*.png"))} if folder.is_dir() else {}
    return {**found, **sklearn_photos()}


def sample_path(name: str) -> Path | None:
    """The path of sample ``name``, or None when it is not there."""
    return sample_images().get(name)
