"""A Trace's file: the ``.npz`` that :meth:`Trace.save` writes and :meth:`Trace.load` reads.

A zip of ``.npy`` members (what ``np.savez_compressed`` writes): every array, ``tokens``, ``meta`` (the
description as JSON text, :mod:`attnviz.capture.description`) and a content marker (:mod:`attnviz.io.trace_marker`)
that lets the output rules replace attnviz's own traces only. A saved trace is a shared file: its meta goes
through the bounded JSON parser and the description's checks, and every failure is one line.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np

from attnviz.capture.description import TraceDescription
from attnviz.capture.spill import SpillStore
from attnviz.errors import InputError
from attnviz.io.atomic import write_atomic
from attnviz.io.trace_marker import MARKER_NAME, marker_digest

__all__ = ["write_trace_file", "read_trace_file", "FORMAT_VERSION", "LOAD_SPILL_BYTES"]

FORMAT_VERSION = 1
# read_trace_file maps members at least this large from a temporary folder instead of memory
LOAD_SPILL_BYTES = 1 << 23
# write_trace_file hands a member's data to the zip in pieces of this many bytes
_WRITE_BYTES = 1 << 22


def write_trace_file(path: str | os.PathLike, arrays: dict, tokens: list[str], meta: dict) -> None:
    """Write ``arrays`` with ``tokens`` and ``meta`` as a trace file (atomically: a temporary name renamed).

    Arrays kept on disk (memory maps) are streamed into the file one at a time through a map of their own
    that is dropped after, so saving a long trace does not make all of it resident at once."""
    payload = dict(arrays)
    payload["tokens"] = np.array(tokens, dtype=str)
    payload["meta"] = np.array(json.dumps({**meta, "format": FORMAT_VERSION}))
    payload[MARKER_NAME] = _marker(payload["meta"])  # by content: the file is attnviz's trace (io.outputs)

    mapped = any(isinstance(a, np.memmap) for a in payload.values())

    def write(tmp: str) -> None:
        # what np.savez_compressed writes (a zip of .npy members), member by member; a long trace's mapped
        # arrays (mostly float noise, deflate gains little) at the fastest level
        with open(tmp, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True,
                                                   compresslevel=1 if mapped else None) as zf:
            for key, value in payload.items():
                with zf.open(key + ".npy", "w", force_zip64=True) as member:
                    _write_member(member, _own_map(value))

    write_atomic(path, write)


def read_trace_file(path: str | os.PathLike) -> tuple[list[str], dict, dict, SpillStore | None]:
    """(tokens, meta, arrays, the temporary folder of mapped members or None) of a saved trace.

    Raises
    ------
    InputError
        One line: the file cannot be read, is not a trace, or its meta is broken."""
    store = None
    try:
        with np.load(path, allow_pickle=False) as data:
            large = [k for k in data.files if data.zip.getinfo(k + ".npy").file_size >= LOAD_SPILL_BYTES]
            store = SpillStore(budget=0) if large else None
            arrays = {k: data[k] for k in data.files if k not in large}
            for k in large:  # copied to disk in chunks and mapped: a long trace opens without its arrays in memory
                with data.zip.open(k + ".npy") as member:
                    arrays[k] = store.copy_in(k, member)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        if store is not None:
            store.close()
        raise InputError(f"cannot read trace {path}: {exc}") from None
    if "tokens" not in arrays or "meta" not in arrays:
        raise InputError(f"{path} is not an attnviz trace (no tokens/meta)")
    arrays.pop(MARKER_NAME, None)  # checked by content where it matters (io.outputs), not an attention array
    tokens = [str(t) for t in arrays.pop("tokens")]
    try:
        meta = _read_meta(arrays.pop("meta"), path)
        TraceDescription.from_meta(meta, f"trace {path}", saved=True)  # a shared file: its facts checked once
    except InputError:
        if store is not None:
            store.close()
        raise
    return tokens, meta, arrays, store


def _write_member(member, arr: np.ndarray) -> None:
    """One ``.npy`` member, the bytes ``np.lib.format.write_array`` writes. A contiguous numeric array goes in
    slices of :data:`_WRITE_BYTES` handed over as views: write_array's own loop copies 16 MiB pieces through a
    buffer and ``tobytes`` (and deflate's output is as large), ~60 MiB more resident per member while saving."""
    if not (arr.flags.c_contiguous and arr.dtype.kind in "biufc" and arr.ndim):
        np.lib.format.write_array(member, arr, allow_pickle=False)
        return
    np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(arr))
    flat = arr.reshape(-1)  # (n,) a view: the array is contiguous
    step = max(1, _WRITE_BYTES // arr.itemsize)
    for i in range(0, flat.size, step):
        member.write(memoryview(flat[i:i + step]).cast("B"))


def _own_map(value):
    """A memory-mapped array through a new map of its file (dropped by the caller after use: the pages it read
    leave resident memory with it); any other array as it is."""
    name = getattr(value, "filename", None) if isinstance(value, np.memmap) else None
    if name and os.path.exists(name):
        fresh = np.load(name, mmap_mode="r", allow_pickle=False)
        if fresh.shape == value.shape and fresh.dtype == value.dtype:
            return fresh
    return value


def _marker(meta: np.ndarray) -> np.ndarray:
    """The content marker (:mod:`attnviz.io.trace_marker`) over the exact bytes ``savez`` writes for ``meta``."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, meta, allow_pickle=False)  # what savez writes as the meta.npy member
    return np.frombuffer(marker_digest(buf.getvalue()), dtype=np.uint8)


def _read_meta(meta: np.ndarray, path) -> dict:
    """A saved trace's meta JSON through the bounded parser (a shared file: no RecursionError, one line)."""
    from attnviz.io.jsonfile import parse_json_text

    if meta.dtype.kind != "U" or meta.ndim != 0:
        raise InputError(f"{path} is not an attnviz trace (its meta is not text)")
    doc = parse_json_text(str(meta), f"the meta of trace {path}", error=InputError)
    if not isinstance(doc, dict):
        raise InputError(f"{path} is not an attnviz trace (its meta is not a JSON object)")
    return doc
