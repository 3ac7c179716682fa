"""Sample images the app offers for the vision models.

``assets/samples/`` holds small PNGs written by :func:`write_samples` (deterministic: held-out
digits and held-out shape scenes, so a sample is never a training image) and two photographs,
``china.jpg`` and ``flower.jpg`` (CC BY 2.0, from scikit-learn's sample images; credits in
``assets/ATTRIBUTION.md``), for vision models trained on real photos.

Regenerate the PNGs with ``python -m attnviz.vision.samples``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["sample_images", "sample_path", "samples_dir", "write_samples", "photos", "PHOTOS"]

PHOTOS = ("china", "flower")  # shipped JPEGs, not generated


def samples_dir() -> Path:
    """The bundled samples folder (inside the assets folder, which ``ATTNVIZ_ASSETS`` may move)."""
    from attnviz.io import assets_dir

    return assets_dir() / "samples"


def photos() -> dict[str, Path]:
    """The two bundled photographs (427×640 JPEGs) by name, those present."""
    folder = samples_dir()
    return {name: folder / f"{name}.jpg" for name in PHOTOS if (folder / f"{name}.jpg").is_file()}


def sample_images() -> dict[str, Path]:
    """Every sample by name: the bundled PNGs (``digit-0`` … ``shapes-star``), then ``china`` and ``flower``."""
    folder = samples_dir()
    found = {p.stem: p for p in sorted(folder.glob("*.png"))} if folder.is_dir() else {}
    return {**found, **photos()}


def sample_path(name: str) -> Path | None:
    """The path of sample ``name``, or None when it is not there."""
    return sample_images().get(name)


def _sample_arrays() -> dict[str, np.ndarray]:
    """The bundled samples as uint8 arrays: the tasks' probe inputs (one held-out image per class)."""
    # imported here: the tasks build on this package, not the other way round
    from attnviz.tasks.digits import DigitsTask
    from attnviz.tasks.shapes import ShapesTask

    digits, shapes = DigitsTask(), ShapesTask()
    out = {f"digit-{label}": img for label, img in zip(digits.labels, digits.probe_inputs())}
    out.update({f"shapes-{label}": img for label, img in zip(shapes.labels, shapes.probe_inputs())})
    return out


def write_samples(directory=None) -> list[Path]:
    """Write the bundled sample PNGs (atomically) into ``directory`` (default: :func:`samples_dir`)."""
    from PIL import Image

    from attnviz.io import write_atomic

    folder = Path(directory) if directory is not None else samples_dir()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, arr in _sample_arrays().items():
        path = folder / f"{name}.png"
        img = Image.fromarray(np.ascontiguousarray(arr))
        write_atomic(path, lambda tmp, img=img: img.save(tmp, format="PNG", optimize=True))
        written.append(path)
    return written


if __name__ == "__main__":
    write_samples()
