"""The bundled sample PNGs: one held-out image per class of the vision tasks (digits, shapes).

Deterministic, and never a training image. Regenerate with ``python -m attnviz.tasks.sample_images``;
the app and CLI find them through :mod:`attnviz.vision.samples`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["write_samples"]


def _sample_arrays() -> dict[str, np.ndarray]:
    """The bundled samples as uint8 arrays: the tasks' probe inputs (one held-out image per class)."""
    from attnviz.tasks.digits import DigitsTask
    from attnviz.tasks.shapes import ShapesTask

    digits, shapes = DigitsTask(), ShapesTask()
    out = {f"digit-{label}": img for label, img in zip(digits.labels, digits.probe_inputs())}
    out.update({f"shapes-{label}": img for label, img in zip(shapes.labels, shapes.probe_inputs())})
    # a small star reaching a corner patch: the rollout slide shows attention away from the centre
    out["shapes-star-offcentre"] = shapes.offcentre_probe_inputs()[shapes.labels.index("star")]
    return out


def write_samples(directory=None) -> list[Path]:
    """Write the bundled sample PNGs (atomically) into ``directory`` (default: :func:`samples_dir`)."""
    from PIL import Image

    from attnviz.io import write_atomic

    from attnviz.vision.samples import samples_dir

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
