"""Trace arrays kept on disk instead of in memory: a per-trace temporary folder of ``.npy`` files (NumPy only).

A long input at full depth keeps per layer x, q, k, v, z, the residual stream … (about 300 MB a layer at
16,384 tokens on a 30-layer, d 576 model: ~9 GB). Above a memory budget each large array is written as it is
produced, with plain writes (the data then sits in the page cache, which is not this process's resident
memory), and opened again read-only with ``np.load(mmap_mode="r")``: the trace holds a memory map, and only
the pages a view reads become resident. A capture hands each layer's arrays over with ``keep(into=...)``: the
writes run on one background thread (:mod:`attnviz.capture.spill_writer`, a bounded queue) while the model
computes the next layers, and :meth:`SpillStore.flush` waits for them before the trace is finished. The arrays are ordinary read-only ``np.ndarray`` s (``np.memmap``), so
``Trace.probs`` and every other reader do not care where an array lives.

The folder is removed when its :class:`SpillStore` is garbage-collected or closed (``weakref.finalize``); maps
opened before stay readable on POSIX systems (an unlinked file lives while it is mapped). A process killed by a
signal cannot remove its folder: each folder holds an owner file (:data:`OWNER_FILE`: attnviz's marker and the
process id), and the first store a later process makes removes folders whose owner process is gone
(:func:`remove_stale`), never a folder without that file or of a process still running.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref

import numpy as np

from attnviz.capture.finite import all_finite
from attnviz.capture.spill_writer import SpillWriter, write_failed
from attnviz.errors import AttnvizError

__all__ = ["SpillStore", "SPILL_BUDGET", "SPILL_FLOOR", "RESIDENT_GOAL", "PROCESS_GOAL", "PROCESS_BOUND",
           "capture_budget", "SPILL_MIN_BYTES", "remove_stale", "OWNER_FILE", "FOLDER_PREFIX"]

FOLDER_PREFIX = "attnviz-trace-"
# the file in each folder saying it is attnviz's and which process made it: {"attnviz": OWNER_MARK, "pid": n}
OWNER_FILE = ".attnviz-owner.json"
OWNER_MARK = "trace arrays kept on disk"
_OWNER_MAX_BYTES = 4096
_cleaned = False  # stale folders are looked for once per process

def _budget_from_env() -> int | None:
    try:
        return max(0, int(os.environ["ATTNVIZ_SPILL_BUDGET"]))
    except (KeyError, ValueError):
        return None


# bytes of large arrays a capture keeps in memory before it starts spilling; None (the default): each capture's
# budget is what RESIDENT_GOAL leaves beside the model's own forward (capture_budget). ATTNVIZ_SPILL_BUDGET
# (bytes) fixes it for a machine with less or more memory to spare; tests set it to 0 to spill everything
SPILL_BUDGET = _budget_from_env()
# never less than this in memory (a layer or two of a long input)
SPILL_FLOOR = 1 << 28
# resident bytes over the weights a long capture aims to stay under (the product's bound is weights + 2 GB at
# 16,384 tokens; measured on a 30-layer d 576 decoder, float32: the forward's own peak is 327 MiB at 4,096
# tokens, ~870 at 8,192, ~1,320 at 16,384)
RESIDENT_GOAL = 1408 << 20
# the whole process's resident goal over the model's weights: the product's bound (weights + 2 GB) less room for
# the growth between two trims of the allocator (attnviz.hf.layer_convert.TRIM_STEP) and the forward's transients.
# RESIDENT_GOAL was measured in a command-line process; the app holds ~0.7 GB more besides its weights (Qt, its
# views, the input shown before), and with the same budget peaked at 2.67 GB at 8,192 tokens on a 0.44 GB model
PROCESS_GOAL = 2_000_000_000 - (384 << 20)
# the bound itself less the forward's transients beyond its estimate (attnviz.models.memory.forward_bytes: 276 MiB
# against 327 measured at 4,096 tokens): where a whole trace fits under it, it is kept whole (capture_budget)
PROCESS_BOUND = 2_000_000_000 - (128 << 20)


def capture_budget(forward_bytes: int = 0, held_bytes: int | None = None, whole_bytes: int | None = None) -> int:
    """Bytes of arrays a capture keeps in memory, when the model's own forward holds about ``forward_bytes`` at
    its peak (``attnviz.models.memory.forward_bytes``): what RESIDENT_GOAL leaves, never under SPILL_FLOOR.
    ``held_bytes``: what the process holds now besides the model's weights (its resident size less them); the
    budget is then also at most what PROCESS_GOAL leaves beside it and the forward. ``whole_bytes``: about what
    the whole trace keeps (``attnviz.models.memory.on_demand_trace_bytes``); when that fits under the bound
    itself (PROCESS_BOUND) and RESIDENT_GOAL, the budget is the room there: nothing is written and no trim
    runs, so PROCESS_GOAL's room for the growth between trims is not needed.

    Writing the arrays costs the forward CPU time (2.2 s of 25 at 4,096 tokens on the decoder above, the writer
    thread beside the model's two), so arrays that fit stay in memory: at 4,096 tokens all of them (1,026 MiB),
    at 16,384 the floor."""
    if SPILL_BUDGET is not None:
        return SPILL_BUDGET
    budget = RESIDENT_GOAL - int(forward_bytes)
    if held_bytes is not None:
        room = min(budget, PROCESS_BOUND - int(forward_bytes) - int(held_bytes))
        if whole_bytes is not None and int(whole_bytes) <= room:
            return room
        budget = min(budget, PROCESS_GOAL - int(forward_bytes) - int(held_bytes))
    return max(SPILL_FLOOR, budget)


# smaller arrays always stay in memory (a file per array costs more than it saves)
SPILL_MIN_BYTES = 1 << 20
# copying a saved member into the folder reads this many bytes at a time
_COPY_CHUNK = 1 << 20  # (16 MiB pieces held ~47 MiB while a member was inflated and copied; 1 MiB: ~5)
# a strided array is written in contiguous pieces of about this many bytes
_WRITE_CHUNK = 1 << 22


def _write_npy(fh, arr: np.ndarray) -> None:
    """``arr`` as a C-order ``.npy``. A strided array (q, z: views of the model's (T, H, dh) tensors as
    (H, T, dh)) is copied to contiguous pieces of about _WRITE_CHUNK bytes along its first axis, then written:
    ``np.save`` walks such an array element-wise in small buffers (0.7 s CPU per 90 MB measured, against
    0.1 s for the pieces)."""
    if arr.flags.c_contiguous or arr.ndim == 0 or arr.dtype.hasobject:
        np.lib.format.write_array(fh, arr, allow_pickle=False)
        return
    header = {"descr": np.lib.format.dtype_to_descr(arr.dtype), "fortran_order": False, "shape": arr.shape}
    np.lib.format.write_array_header_2_0(fh, header) if arr.nbytes >= 1 << 32 else \
        np.lib.format.write_array_header_1_0(fh, header)
    step = max(1, _WRITE_CHUNK // max(1, arr[:1].nbytes))
    for i in range(0, arr.shape[0], step):
        fh.write(np.ascontiguousarray(arr[i:i + step]).data)


def _remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts: it cannot be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _owner_pid(folder: str) -> int | None:
    """The process id in a folder's owner file, or None (no file, not attnviz's marker, not a plain small file)."""
    path = os.path.join(folder, OWNER_FILE)
    try:
        if not os.path.isfile(path) or os.path.islink(path) or os.path.getsize(path) > _OWNER_MAX_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            doc = json.loads(fh.read(_OWNER_MAX_BYTES))
    except (OSError, ValueError):
        return None
    pid = doc.get("pid") if isinstance(doc, dict) and doc.get("attnviz") == OWNER_MARK else None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def remove_stale(parent: str | None = None) -> list[str]:
    """Remove ``attnviz-trace-*`` folders in ``parent`` (default: the temporary directory) left by processes that
    are gone (killed by a signal: their finalizers never ran). Only a real folder (not a link) of this user
    holding attnviz's owner file whose process no longer exists, and holding nothing but ``.npy`` files, is
    removed. Returns the folders removed."""
    parent = parent or tempfile.gettempdir()
    removed = []
    try:
        names = [n for n in os.listdir(parent) if n.startswith(FOLDER_PREFIX)]
    except OSError:
        return removed
    for name in names:
        folder = os.path.join(parent, name)
        try:
            if os.path.islink(folder) or not os.path.isdir(folder) or os.stat(folder).st_uid != os.getuid():
                continue
            pid = _owner_pid(folder)
            if pid is None or pid == os.getpid() or _alive(pid):
                continue
            if any(n != OWNER_FILE and not n.endswith(".npy") for n in os.listdir(folder)):
                continue  # something attnviz does not write: not ours to remove
        except OSError:
            continue
        _remove(folder)
        removed.append(folder)
    return removed


class SpillStore:
    """A temporary folder holding some of one trace's arrays as read-only memory maps.

    Parameters
    ----------
    budget : bytes of large arrays :meth:`keep` leaves in memory before it writes them to disk (0: every large
        array is spilled; default :data:`SPILL_BUDGET`, or :data:`SPILL_FLOOR` when that is None; a capture
        passes :func:`capture_budget`).
    min_bytes : arrays smaller than this always stay in memory (default :data:`SPILL_MIN_BYTES`).
    folder : where the temporary folder is made (default: the system's temporary directory).
    """

    def __init__(self, budget: int | None = None, min_bytes: int | None = None, folder: str | None = None):
        # the module's figures read when a store is made (not when this module is imported), so they can be set
        if budget is None:
            budget = SPILL_FLOOR if SPILL_BUDGET is None else SPILL_BUDGET
        self.budget = int(budget)
        self.min_bytes = int(SPILL_MIN_BYTES if min_bytes is None else min_bytes)
        self.held = 0
        global _cleaned
        if not _cleaned:  # before this process's own folder exists
            _cleaned = True
            remove_stale(folder)
        self.folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=folder)
        with open(os.path.join(self.folder, OWNER_FILE), "w", encoding="utf-8") as fh:
            json.dump({"attnviz": OWNER_MARK, "pid": os.getpid()}, fh)
        self.files: dict[str, str] = {}  # key → path of its .npy
        # keys of spilled arrays found finite while they were still in memory: the trace's NaN check
        # (attnviz.capture.finite) need not read them back from disk, which would make them all resident
        self.finite: set[str] = set()
        # arrays handed to keep() again and again (a model's rotary tables, one pair for every layer): id → (the
        # array, kept alive so its id stays its own; its map; found finite), so each is written once
        self._shared: dict[int, tuple] = {}
        self._close = weakref.finalize(self, _remove, self.folder)
        self.writer = SpillWriter(self.folder)  # keep(into=...) writes on its thread

    # -- writing -----------------------------------------------------------------------------------
    def _path(self, key: str) -> str:
        path = self.files.get(key)
        if path is None:
            path = self.files[key] = os.path.join(self.folder, f"{len(self.files)}.npy")
        return path

    def spill(self, key: str, arr: np.ndarray) -> np.ndarray:
        """Write ``arr`` to disk and return a read-only memory map of it (C order, same dtype and shape)."""
        path = self._path(key)
        try:
            with open(path, "wb") as fh:  # plain writes: page cache, not this process's resident memory
                _write_npy(fh, np.asanyarray(arr))
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except OSError as exc:  # a full disk, the folder removed: the capture stops with a message
            raise AttnvizError(write_failed(self.folder, exc)) from exc

    def keep(self, arrays: dict, shared=(), into: dict | None = None) -> dict:
        """``arrays`` with each large array kept in memory while the budget lasts, spilled after; the arrays
        named in ``shared`` are remembered, so the same array handed over again is not written again.

        With ``into`` (the trace's array dict) the result goes into it and the arrays to spill are written on
        the store's writer thread (:mod:`attnviz.capture.spill_writer`): each entry of ``into`` stays the array
        in memory until its file is written, then becomes the read-only map. :meth:`flush` waits for the
        writes (and raises AttnvizError when one failed). ``shared`` arrays are written at once (their map is
        handed to later layers)."""
        out, done, done_finite = {}, {}, {}  # done: one file per distinct array (a layer may name one array twice)
        later: dict[int, list] = {}  # id → [array, its keys] to write on the writer thread
        for key, arr in arrays.items():
            size = getattr(arr, "nbytes", 0)
            seen = self._shared.get(id(arr))
            if seen is not None and seen[0] is arr:
                out[key] = seen[1]
                if seen[2]:
                    self.finite.add(key)
            elif size < self.min_bytes or isinstance(arr, np.memmap):
                out[key] = arr
            elif id(arr) in later:
                out[key] = arr
                later[id(arr)][1].append(key)
            elif id(arr) in done:
                out[key] = done[id(arr)]
                if done[id(arr)] is not arr and done_finite.get(id(arr)):
                    self.finite.add(key)
            elif self.held + size <= self.budget:
                self.held += size
                out[key] = done[id(arr)] = arr
            elif into is not None and key not in shared:
                self._path(key)  # named now: the trace's writers and the trim see it spilled
                out[key], later[id(arr)] = arr, [arr, [key]]
            else:
                if arr.dtype.kind == "f" and all_finite(arr):
                    self.finite.add(key)
                    done_finite[id(arr)] = True
                out[key] = done[id(arr)] = self.spill(key, arr)
            if key in shared and id(arr) not in self._shared:
                self._shared[id(arr)] = (arr, out[key], key in self.finite)
        if into is None:
            return out
        into.update(out)
        for arr, keys in later.values():
            self.writer.put(arr.nbytes, self._job(arr, keys, into))
        return out

    def _job(self, arr: np.ndarray, keys: list, into: dict):
        """Write ``arr`` (file of ``keys[0]``), then put its map in ``into`` under every key still holding it."""
        def job():
            finite = arr.dtype.kind == "f" and all_finite(arr)
            mapped = self.spill(keys[0], arr)
            for key in keys:
                if finite:
                    self.finite.add(key)
                if into.get(key) is arr:  # replaced by nobody since: the copy in memory can go
                    into[key] = mapped
        return job

    def flush(self) -> None:
        """Wait for the writer thread's writes; raises AttnvizError when one failed."""
        self.writer.flush()

    def copy_in(self, key: str, stream) -> np.ndarray:
        """A ``.npy`` read from a binary ``stream`` (a member of a saved trace), copied to disk in chunks and
        mapped read-only: a long trace opens without its arrays in memory. Raises ValueError (not a plain
        numeric .npy) and OSError."""
        path = self._path(key)
        with open(path, "wb") as fh:
            shutil.copyfileobj(stream, fh, _COPY_CHUNK)
        return np.load(path, mmap_mode="r", allow_pickle=False)

    # -- reading -----------------------------------------------------------------------------------
    def is_spilled(self, key: str) -> bool:
        return key in self.files

    def fresh(self, key: str) -> np.ndarray:
        """A new read-only map of a spilled array: a writer that reads it whole (``Trace.save``) drops it
        afterwards, so the pages it touched leave this process's resident memory with it."""
        return np.load(self.files[key], mmap_mode="r", allow_pickle=False)

    @property
    def spilled_bytes(self) -> int:
        return sum(os.path.getsize(p) for p in self.files.values() if os.path.exists(p))

    def close(self) -> None:
        """Remove the folder now (maps already opened stay readable on POSIX systems)."""
        self._close()

    @property
    def closed(self) -> bool:
        return not self._close.alive
