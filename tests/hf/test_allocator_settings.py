"""The C allocator's thresholds a long capture fixes (attnviz.hf.allocator.keep_freed_memory).

glibc maps a large block of its own and unmaps it when freed, until it has adapted its threshold to the blocks
freed so far, and hands the top of its heap back as soon as twice that is free: a capture keeps each layer's
arrays between the layers' freed work space, and each layer faulted that space in again (bench ``long``). Fixed,
a freed block under MMAP_THRESHOLD stays in the arena, resident and reusable. Each case runs in a fresh
interpreter (the settings are the process's own); the control is the same child with the settings switched off
(``ATTNVIZ_MALLOC_SETTINGS=0``), where the freed block goes straight back to the system."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from attnviz.hf import allocator

pytestmark = pytest.mark.skipif(allocator.free_arena_bytes() is None, reason="glibc 2.33+ (mallopt, mallinfo2)")

BLOCK = 16 << 20  # over glibc's first threshold (128 KiB), under MMAP_THRESHOLD

_CHILD = r"""
import ctypes, json
from attnviz.hf import allocator
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
settled = allocator.keep_freed_memory()
again = allocator.keep_freed_memory()
free0 = allocator.free_arena_bytes()
block = libc.malloc(%d)
ctypes.memset(block, 1, %d)
libc.free(block)
print(json.dumps({"settled": settled, "again": again, "kept_free": allocator.free_arena_bytes() - free0}))
""" % (BLOCK, BLOCK)


def _child(settings: str) -> dict:
    run = subprocess.run([sys.executable, "-c", _CHILD], env={**os.environ, "ATTNVIZ_MALLOC_SETTINGS": settings},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_freed_block_stays_in_the_arena_once_the_thresholds_are_fixed():
    fixed, default = _child("1"), _child("0")
    assert fixed["settled"] and fixed["again"]  # set once, and the second call says so without setting again
    # freed, still the arena's: the next layer's block of this size reuses it
    assert fixed["kept_free"] >= BLOCK * 3 // 4
    assert not default["settled"]  # control: switched off, glibc's defaults
    assert default["kept_free"] < BLOCK // 4  # the block was mapped for itself and handed back when freed
