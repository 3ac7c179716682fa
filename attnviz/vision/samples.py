"""Sample images the app offers for the vision models.

``assets/samples/`` holds small PNGs written by :func:`attnviz.tasks.sample_images.write_samples`
(deterministic: held-out digits and held-out shape scenes, so a sample is never a training image) and two photographs,
``china.jpg`` and ``flower.jpg`` (CC BY 2.0, from scikit-learn's sample images; credits in
``assets/ATTRIBUTION.md``), for vision models trained on real photos.

Regenerate the PNGs with ``python -m attnviz.tasks.sample_images``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["sample_images", "sample_path", "samples_dir", "photos", "PHOTOS", "resolve_image", "SAMPLE_PREFIX"]

PHOTOS = ("china", "flower")  # shipped JPEGs, not generated
SAMPLE_PREFIX = "sample:"  # "sample:shapes-star" names a bundled sample (scenes and the command line alike)


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


def resolve_image(value: str) -> str:
    """``sample:NAME`` → the bundled sample's path; any other value unchanged (a file path).

    Raises InputError (one line, naming the samples there are) for a sample this build does not have.
    """
    if not value.startswith(SAMPLE_PREFIX):
        return value
    name = value[len(SAMPLE_PREFIX):]
    path = sample_path(name)
    if path is None:
        from attnviz.errors import InputError

        raise InputError(f"no sample image {name!r} in this build (there are: {', '.join(sample_images()) or 'none'})")
    return str(path)
