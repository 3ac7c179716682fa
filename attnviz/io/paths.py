"""Never write over what the user gave us: an output path that is, or links to, an input or a model file.

Comparison is by the file a path finally names (symlinks followed, ``..`` resolved) and, for files that
exist, by device and inode, so a hard link to an input is caught too.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnviz.errors import AttnvizError  # dependency-free, like this layer

__all__ = ["same_file", "inside", "refuse_overwrite", "OverwriteError", "lexical_path"]


class OverwriteError(AttnvizError):
    """An output would replace an input: one line in the CLI (exit 2), a notice in the app."""


def _real(path) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def lexical_path(path) -> Path:
    """The absolute path as written (``..`` folded, links not followed): where a link itself lies."""
    return Path(os.path.abspath(Path(path).expanduser()))


def same_file(a, b) -> bool:
    """True when ``a`` and ``b`` name the same file (after following links; hard links included), or
    ``a`` is the link ``b`` itself (a link is judged at both ends)."""
    ra, rb = _real(a), _real(b)
    if ra == rb or lexical_path(a) == lexical_path(b):
        return True
    try:
        return os.path.samefile(ra, rb)
    except OSError:  # one of them does not exist yet: then only equal real paths are the same file
        return False


def inside(path, folder) -> bool:
    """True when ``path`` lies in ``folder`` or is ``folder`` itself, judged at both ends of any link: where
    ``path`` points (links followed) and where it lies (a Hugging Face snapshot's file is a link into the
    cache's blobs, yet it is the snapshot's file)."""
    for p in (_real(path), lexical_path(path)):
        for f in (_real(folder), lexical_path(folder)):
            if p == f or f in p.parents:
                return True
    return False


def refuse_overwrite(output, inputs=(), folders=()) -> None:
    """Raise :class:`OverwriteError` when ``output`` is any of ``inputs`` or lies inside any of ``folders``.

    Parameters
    ----------
    output : path
        A file (or folder) about to be written.
    inputs : iterable of paths
        Files read by the command (an image, a saved trace). ``None`` entries are skipped.
    folders : iterable of paths
        Folders that must stay as they are (a model directory). ``None`` entries are skipped.
    """
    for src in inputs:
        if src is not None and same_file(output, src):
            raise OverwriteError(f"{output} is the input {src}: choose another output name")
    for folder in folders:
        if folder is not None and Path(folder).is_dir() and inside(output, folder):
            raise OverwriteError(f"{output} is inside the model directory {folder}: choose an output elsewhere")
