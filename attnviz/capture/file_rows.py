"""Rows of a long trace's (heads, T, d) q or k, read from its file rather than through its memory map.

A long capture keeps q and k on disk as read-only maps of ``.npy`` files (:mod:`attnviz.capture.spill`). Every
page a map touches stays in the process's resident memory (RSS) while the map lives, and the kernel maps
64 KiB or more around each touched page: the walkthrough's opening rule, which reads 64 rows spread over the
input, or the All heads grid, which reads every layer's q and k once, left all of q and k resident (at 16,384
tokens on a 30-layer model, 1.5 GB). Read with ``os.preadv`` into a fresh array, the same bytes come from the
page cache and leave nothing resident once the block is computed. Arrays in memory (short traces, tests) are
indexed as before.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

__all__ = ["Rows", "positions"]


def _file_position(arr) -> tuple[str, int] | None:
    """(path, byte position of the first element) of a C-contiguous read-only map of a file, else None."""
    mm = getattr(arr, "_mmap", None)
    path = getattr(arr, "filename", None)
    if not hasattr(os, "pread"):  # Windows: read through the map
        return None
    if mm is None or path is None or arr.ndim not in (2, 3) or not arr.flags.c_contiguous or arr.flags.writeable:
        return None
    try:
        first = np.frombuffer(mm, np.uint8, count=1).ctypes.data  # where the map starts in this process
    except (TypeError, ValueError):  # a closed map
        return None
    start = int(arr.offset) - int(arr.offset) % mmap.ALLOCATIONGRANULARITY  # the map's offset in the file
    return str(path), start + (arr.ctypes.data - first)


def _runs(rows: np.ndarray) -> list[tuple[int, int, int]]:
    """(index in ``rows``, first row, count) of each run of consecutive ascending rows."""
    if not len(rows):
        return []
    cut = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [len(rows)]])
    return [(int(a), int(rows[a]), int(b - a)) for a, b in zip(starts, ends)]


def _read_into(fd: int, dest: np.ndarray, pos: int) -> bool:
    """Fill the C-contiguous ``dest`` with the file's bytes from ``pos``; False on a short read."""
    view = memoryview(dest).cast("B")
    if hasattr(os, "preadv"):  # straight into the array
        return os.preadv(fd, [view], pos) == view.nbytes
    data = os.pread(fd, view.nbytes, pos)  # macOS builds without preadv: one copy more
    if len(data) != view.nbytes:
        return False
    view[:] = data
    return True


class Rows:
    """Reads ``arr[heads][:, rows]`` of one (heads, T, d) array: from the file when it is a map of one."""

    def __init__(self, arr):
        self.arr = arr
        self.shape, self.dtype = arr.shape, np.dtype(arr.dtype)
        self._file = _file_position(arr)

    def block(self, heads, rows) -> np.ndarray:
        """(len(heads), len(rows), d) copy of the rows ``rows`` (an index array) of heads ``heads``."""
        heads, rows = np.atleast_1d(np.asarray(heads, np.intp)), np.atleast_1d(np.asarray(rows, np.intp))
        if self._file is not None:
            got = self._read(heads, rows)
            if got is not None:
                return got
        run = len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows)
        if run:  # a slice of the rows, then the heads: nothing but these rows is read
            return np.asarray(self.arr[:, int(rows[0]):int(rows[-1]) + 1][heads])
        return np.asarray(self.arr[heads[:, None], rows[None, :]])

    def rows(self, head: int, rows) -> np.ndarray:
        """(len(rows), d) rows of one head: a view (no copy) of an array in memory when they are one range."""
        rows = np.atleast_1d(np.asarray(rows, np.intp))
        if self._file is None and len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows):
            return self.arr[head, int(rows[0]):int(rows[-1]) + 1]
        return self.block([head], rows)[0]

    def _read(self, heads: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        path, first = self._file
        _, t, d = self.shape
        row_bytes = d * self.dtype.itemsize
        out = np.empty((len(heads), len(rows), d), self.dtype)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # the spill folder is gone (the map stays readable): read through the map
            self._file = None
            return None
        try:
            for i, h in enumerate(heads):
                for at, r0, n in _runs(rows):
                    pos = first + (int(h) * t + r0) * row_bytes
                    if not _read_into(fd, out[i, at:at + n], pos):
                        return None  # a short read (a truncated file): the map says what is there
        finally:
            os.close(fd)
        return out


def positions(arr, a: int, b: int) -> np.ndarray:
    """Positions [a, b) of a (T, D) array (rows) or a per-head (H, T, d) one (axis 1), read from the file when
    ``arr`` maps one (nothing of it stays resident), else sliced."""
    if arr.ndim == 3:
        return Rows(arr).block(np.arange(arr.shape[0]), np.arange(a, min(b, arr.shape[1])))
    at = _file_position(arr)
    if at is None:
        return np.asarray(arr[a:b])
    out = np.empty((max(0, min(b, arr.shape[0]) - a), arr.shape[1]), arr.dtype)  # (b − a, D)
    try:
        fd = os.open(at[0], os.O_RDONLY)
    except OSError:  # the file is gone: the map still reads
        return np.asarray(arr[a:b])
    try:
        done = _read_into(fd, out, at[1] + a * arr.shape[1] * arr.dtype.itemsize)
    finally:
        os.close(fd)
    return out if done else np.asarray(arr[a:b])
