"""The content marker of a saved trace: how attnviz knows an ``.npz`` is its own trace, not a user's arrays.

Any ``.npz`` may hold arrays named ``tokens`` and ``meta``; only a trace :meth:`Trace.save` wrote holds the
array ``MARKER_NAME`` whose 32 bytes are the SHA-256 of a fixed random key followed by the exact bytes of the
file's ``meta.npy`` member. No user's arrays carry that by accident (it binds the marker to the meta it was
written with), and a trace of any length carries it, the long-input format included (same ``save``).

Dependency-free (the leaf layer, no numpy): the check reads two zip members, each bounded in size first, so
a zip bomb named ``meta.npy`` costs nothing.
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path

__all__ = ["MARKER_NAME", "marker_digest", "has_trace_marker", "MAX_META_BYTES"]

MARKER_NAME = "attnviz_trace_marker"
# a random constant, fixed for the format: it makes the digest attnviz's own, not any SHA-256 of the meta
_KEY = bytes.fromhex("77b0b37672cf414e137ecb721e957fa5") + b"attnviz trace marker v1"
_DIGEST_BYTES = 32
MAX_META_BYTES = 64 * 2**20  # a trace's meta is a few kB of JSON (×4 as numpy's UTF-32); bounded before reading
_MAX_MARKER_BYTES = 4096  # the marker member: a small .npy header + 32 bytes


def marker_digest(meta_member: bytes) -> bytes:
    """The 32 marker bytes for a trace whose ``meta.npy`` zip member is ``meta_member`` (its exact bytes)."""
    return hashlib.sha256(_KEY + meta_member).digest()


def _member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes | None:
    try:
        info = zf.getinfo(name)
    except KeyError:
        return None
    if info.file_size > limit:
        return None
    with zf.open(info) as fh:
        data = fh.read(limit + 1)  # the header's size may lie: never read past the limit
    return data if len(data) <= limit else None


def has_trace_marker(path) -> bool:
    """True when ``path`` is an ``.npz`` that :meth:`attnviz.capture.trace.Trace.save` wrote (by content).

    Never raises: an unreadable, damaged or foreign file is simply not a trace attnviz wrote.
    """
    try:
        if not Path(path).is_file():
            return False
        with zipfile.ZipFile(path) as zf:
            meta = _member(zf, "meta.npy", MAX_META_BYTES)
            mark = _member(zf, f"{MARKER_NAME}.npy", _MAX_MARKER_BYTES)
    except (OSError, zipfile.BadZipFile, zlib.error, ValueError, RuntimeError, EOFError, NotImplementedError):
        return False  # RuntimeError: an encrypted member; NotImplementedError: an unknown compression
    if meta is None or mark is None or len(mark) < _DIGEST_BYTES:
        return False
    return mark[-_DIGEST_BYTES:] == marker_digest(meta)
