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

__all__ = ["resident_bytes", "free_arena_bytes", "reusable_bytes", "TRIM"]


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
