"""The C allocator's state as a long capture sees it: resident size, free bytes it can reuse, and trims.

A capture's in-memory budget leaves room for what the process holds besides the model's weights
(:mod:`attnviz.hf.held_memory`). The resident size alone overstates that: memory the previous capture freed stays
resident in glibc's arenas as free chunks, and the next capture allocates into it before it asks the system for
more. Counted as held, it cut the budget of every capture after the first (the 4,096-token bench wrote 657 MiB
of its 1,026 to disk and took 1.07x the SDPA forward, against none and 0.98x before the budget counted it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["resident_bytes", "free_arena_bytes", "reusable_bytes", "TRIM", "keep_freed_memory", "MMAP_THRESHOLD",
           "TRIM_THRESHOLD"]


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None)
    except OSError:
        return None


_LIBC = _libc()
_MALLINFO2 = getattr(_LIBC, "mallinfo2", None)  # glibc >= 2.33
if _MALLINFO2 is not None:
    _MALLINFO2.restype = _MallInfo2
# free arena bytes right after the last trim: a trim makes the pages of free chunks non-resident, and only those
# chunks can still be free and non-resident later (a chunk allocated and freed again is resident)
_free_after_trim = 0


def resident_bytes() -> int | None:
    """This process's resident memory (Linux's /proc/self/statm; None elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def free_arena_bytes() -> int | None:
    """Bytes in free chunks of every glibc malloc arena (``mallinfo2().fordblks``; None without glibc 2.33+)."""
    if _MALLINFO2 is None:
        return None
    return int(_MALLINFO2().fordblks)


def reusable_bytes() -> int:
    """Resident bytes the allocator holds free (a lower bound; 0 where unknown): the arenas' free bytes less what
    was free at the last trim (possibly handed back, so not resident)."""
    free = free_arena_bytes()
    return 0 if free is None else max(0, free - _free_after_trim)


def _trim_function():
    """glibc's ``malloc_trim`` wrapped to note what stays free after it (None elsewhere, or with
    ATTNVIZ_MALLOC_TRIM=0): hands the free pages of every malloc arena back to the system."""
    if os.environ.get("ATTNVIZ_MALLOC_TRIM", "1") == "0":
        return None
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    if malloc_trim is None:
        return None

    def trim(pad: int = 0) -> int:
        global _free_after_trim
        got = malloc_trim(pad)
        _free_after_trim = free_arena_bytes() or 0
        return got
    return trim


TRIM = _trim_function()


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
# blocks under this come from the arenas, and are reused once freed; larger ones are mapped and unmapped each time
# (glibc's own ceiling for the threshold on 64-bit systems; a 4,096-token layer's largest block, the MLP's
# hidden units of a d 576 model, is 24 MiB)
MMAP_THRESHOLD = 32 << 20
# free memory at the top of an arena handed back to the system once it exceeds this
TRIM_THRESHOLD = 256 << 20
_settled: list = []


def keep_freed_memory() -> bool:
    """Fix glibc's two thresholds once per process, before a long capture (False where they cannot be set, or
    with ATTNVIZ_MALLOC_SETTINGS=0).

    glibc adapts both to the largest block freed so far and hands the top of an arena back as soon as its free
    part exceeds twice that. A capture keeps each layer's q, k, z and residual stream, so the layers' freed
    work space sits between kept blocks and at the top of the heap, and was handed back and faulted in again
    layer after layer: 5-40 thousand page faults and 0.2-0.9 s of system time a 4,096-token capture of a
    30-layer d 576 decoder, against none for the model's own forward (bench ``long``). Fixed, the arenas keep
    up to TRIM_THRESHOLD free at their top and serve every block under MMAP_THRESHOLD; the model's own forward
    runs under the same settings. Explicit trims (:data:`TRIM`) still hand back what a capture beyond its memory
    budget frees."""
    if _settled:
        return _settled[0]
    mallopt = getattr(_LIBC, "mallopt", None) if _MALLINFO2 is not None else None  # glibc (2.33+) only
    ok = mallopt is not None and os.environ.get("ATTNVIZ_MALLOC_SETTINGS", "1") != "0" \
        and bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _settled.append(ok)
    return ok
