"""Heavy imports on workers: torch once and safely, Qt-free modules in bulk, with the collector paused.

Qt-free (workers run it). Split from :mod:`attnviz.gui.workers` (which re-exports these names). How start-up
uses them: :mod:`attnviz.gui.startup`.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from contextlib import contextmanager

__all__ = ["gc_paused", "ensure_torch", "import_modules_job"]

log = logging.getLogger(__name__)


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


_TORCH_LOCK = threading.Lock()
_torch_ready = False


def ensure_torch() -> None:
    """Import torch in one thread at a time.

    ``import torch`` is not safe from two threads at once: the second one can be handed the
    half-initialised module (Python's import-lock deadlock avoidance) and fail with errors such as
    "operator prims::log10 does not exist". Every job calls this first; after the first import it
    is a dictionary lookup.
    """
    global _torch_ready
    with _TORCH_LOCK:
        if _torch_ready:
            return
        from attnviz.gui.startup.native_preload import preload_torch_libraries
        from attnviz.gui.startup.switches import enabled

        # the big native libraries first, with the GIL released: the import's own loading of them
        # would freeze the GUI thread for 0.2-0.3 s (see attnviz.gui.startup.native_preload)
        if enabled("native_preload"):
            preload_torch_libraries()
        with gc_paused():
            import torch
        # a small model's threads until the loaded model says otherwise (model_jobs: every core for a large one)
        from attnviz.device import app_threads

        torch.set_num_threads(app_threads(0))
        _torch_ready = True


def import_modules_job(names: list[str]) -> list[str]:
    """Import Qt-free modules off the GUI thread (torch, analysis, tasks...).

    Never Qt-using ones (pyqtgraph, attnviz.gui.*): PySide6 builds its enums lazily and that is not
    thread-safe; importing pyqtgraph on a worker while the GUI runs crashed the process in tests.
    """
    import importlib

    done = []
    with gc_paused():
        for name in names:
            try:
                importlib.import_module(name)
                done.append(name)
            except ImportError as exc:
                log.warning("cannot import %s: %s", name, exc)
    return done
