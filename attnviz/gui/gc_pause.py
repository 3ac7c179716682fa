"""Python's cyclic collector paused around heavy imports, then what they built frozen: :func:`gc_paused`.

Qt-free, at the bottom of ``gui/`` (workers, the start-up's import plans and the window's page imports use it),
so :mod:`attnviz.gui.startup` need not import :mod:`attnviz.gui.heavy_imports`, which imports the start-up's
native preload.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["gc_paused"]


_GC_LOCK = threading.Lock()
_gc_pauses = 0


def _pause_gc() -> None:
    global _gc_pauses
    with _GC_LOCK:
        _gc_pauses += 1
        gc.disable()


def _resume_gc() -> None:
    global _gc_pauses
    with _GC_LOCK:
        _gc_pauses -= 1
        if _gc_pauses == 0:
            gc.freeze()
            gc.enable()


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector around heavy imports, then freeze what they built.

    Why: a module import in a worker allocates hundreds of thousands of objects; every so often
    that triggers a full collection, which holds the GIL while it walks the whole heap (torch,
    Qt, pyqtgraph: 0.3–0.6 s here) and freezes the GUI thread with it. Imported modules live for
    the whole session, so after the import they are moved to the permanent generation
    (``gc.freeze``) and later collections no longer walk them.
    """
    _pause_gc()
    try:
        yield
    finally:
        _resume_gc()
