"""What a path given to ``attnviz PATH…`` is: a model folder, an image, a saved trace, …

Qt-free, torch-free and numpy-free: the command line classifies its arguments before anything heavy
loads. Other kinds (e.g. lesson scenes) plug in with :func:`register_path_kind`; the GUI side that
opens each kind is ``attnviz.gui.open_paths``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["classify_path", "register_path_kind", "path_kinds", "IMAGE_SUFFIXES", "UnknownPathError"]

# what Pillow reads on every platform (the app's image loader)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm")


class UnknownPathError(ValueError):
    """The path does not exist or is nothing attnviz opens (the message says which)."""


def _is_model_folder(p: Path) -> bool:
    return p.is_dir() and (p / "config.json").is_file()


def _is_image(p: Path) -> bool:
    return p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES


def _is_trace(p: Path) -> bool:
    """An ``attnviz trace`` .npz: a zip of arrays holding ``meta`` and ``tokens``."""
    if not (p.is_file() and p.suffix.lower() == ".npz"):
        return False
    try:
        with zipfile.ZipFile(p) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return {"meta.npy", "tokens.npy"} <= names


def _is_model_config(p: Path) -> bool:
    """A model's own ``config.json`` given instead of its folder."""
    if not (p.is_file() and p.name == "config.json" and (p.parent / "model.safetensors").is_file()):
        return False
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    try:
        read_json_file(p, 64 * 1024 * 1024, what="config file")  # bounded: "[" × 100000 is no crash
    except JsonLimitError:
        return False
    return True


# (kind, test), tried in order; the first test that answers True names the kind
_KINDS: list[tuple[str, Callable[[Path], bool]]] = [
    ("model", _is_model_folder),
    ("model", _is_model_config),
    ("trace", _is_trace),
    ("image", _is_image),
]


def register_path_kind(kind: str, test: Callable[[Path], bool], first: bool = False) -> None:
    """Teach :func:`classify_path` a new kind of file (e.g. ``"scene"`` for lesson scene JSON files).

    Parameters
    ----------
    kind : the name ``classify_path`` answers and ``attnviz.gui.open_paths`` dispatches on.
    test : ``test(path) -> bool``; must not raise for files of other kinds, and should be cheap.
    first : try it before the built-in kinds (default: after them).
    """
    entry = (kind, test)
    _KINDS.insert(0, entry) if first else _KINDS.append(entry)


def path_kinds() -> list[str]:
    """The kinds :func:`classify_path` can answer, in the order they are tried (without repeats)."""
    return list(dict.fromkeys(kind for kind, _ in _KINDS))


def classify_path(path) -> str:
    """``"model"``, ``"image"``, ``"trace"`` or a registered kind.

    Raises
    ------
    UnknownPathError
        with a one-line reason when the path does not exist or is of no known kind.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise UnknownPathError(f"{path}: no such file or folder")
    for kind, test in _KINDS:
        if test(p):
            return kind
    if p.is_dir():
        raise UnknownPathError(f"{path}: a folder without config.json is not a model folder")
    raise UnknownPathError(f"{path}: not a model folder, an image ({', '.join(IMAGE_SUFFIXES)}) "
                           "or a trace saved by `attnviz trace`")
