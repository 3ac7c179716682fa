"""Heavy imports on workers: torch once and safely, Qt-free modules in bulk, with the collector paused.

Qt-free (workers run it). Split from :mod:`attnviz.gui.workers` (which re-exports these names). How start-up
uses them: :mod:`attnviz.gui.startup`.
"""

from __future__ import annotations

import logging
import threading

from attnviz.gui.gc_pause import gc_paused

__all__ = ["ensure_torch", "import_modules_job"]

log = logging.getLogger(__name__)


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
