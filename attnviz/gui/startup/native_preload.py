"""Load torch's big native libraries without holding the interpreter lock (issue 18: no GUI freeze).

``import torch`` maps and relocates ~0.5 GB of shared libraries (libtorch_cpu and friends) and runs
their C++ static initialisers. Python's import does that inside ``dlopen`` while it holds the GIL, so
the GUI thread cannot run for the whole time: a 0.3–0.8 s freeze in the middle of start-up (measured
with the stall meter). A foreign function called through :mod:`ctypes` releases the GIL; calling
``dlopen`` that way first loads the same libraries while the GUI keeps running, and the import's own
``dlopen`` then finds them loaded. ``RTLD_LOCAL``: nothing about symbol visibility changes.

Linux only (elsewhere, or when anything is unexpected, this does nothing and torch loads as usual).
Qt-free: it runs on a worker, before the worker imports torch.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import sys
from pathlib import Path

__all__ = ["preload_torch_libraries", "TORCH_LIBRARIES"]

log = logging.getLogger(__name__)

# the dependency order of the heavy ones (each dlopen also loads what it needs, e.g. libgomp)
TORCH_LIBRARIES = ("libc10.so", "libtorch_cpu.so", "libtorch.so")


def _dlopen():
    try:
        fn = ctypes.CDLL(None).dlopen
    except AttributeError:  # glibc < 2.34 keeps dlopen in libdl
        fn = ctypes.CDLL("libdl.so.2").dlopen
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return fn


def preload_torch_libraries() -> list[str]:
    """dlopen torch's native libraries with the GIL released; returns the names loaded (none if torch
    is imported already, not installed, or this is not Linux)."""
    if not sys.platform.startswith("linux") or "torch" in sys.modules:
        return []
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin:
        return []
    lib_dir = Path(spec.origin).parent / "lib"
    loaded = []
    try:
        dlopen = _dlopen()
        for name in TORCH_LIBRARIES:
            path = lib_dir / name
            if path.is_file() and dlopen(os.fsencode(path), os.RTLD_NOW | os.RTLD_LOCAL):
                loaded.append(name)
    except (OSError, AttributeError) as exc:  # an odd libc: torch then loads the ordinary way
        log.debug("torch libraries not preloaded: %s", exc)
    return loaded
