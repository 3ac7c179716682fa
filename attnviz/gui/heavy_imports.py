"""Heavy imports on workers: torch once and safely, Qt-free modules in bulk, with the collector paused.

Qt-free (workers run it). Split from :mod:`attnviz.gui.workers` (which re-exports these names).
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from concurrent.futures import Future
from contextlib import contextmanager

__all__ = ["gc_paused", "hold_gc_for_startup", "release_startup_gc", "ensure_torch", "import_modules_job", "PYQTGRAPH_NEEDS", "pyqtgraph_plan", "prefetch",
           "prefetched"]

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


_startup_hold = False


def hold_gc_for_startup() -> None:
    """Pause the collector from launch until :func:`release_startup_gc` (the first map is drawn).

    Why: the first map needs PySide6, numpy, pyqtgraph and the views imported and the window built,
    about a second of CPU on two cores, most of it creating objects that live for the whole session;
    the collections that work triggers between the paused imports walked a growing heap for ~0.1 s in
    all (measured: first map 0.96–1.02 s without them against 1.04–1.23 s with). Released once, after
    which everything built so far is frozen like any paused import's.
    """
    global _startup_hold
    if not _startup_hold:
        _startup_hold = True
        _pause_gc()


def release_startup_gc() -> None:
    """End :func:`hold_gc_for_startup`'s pause (idempotent; does nothing if none was held)."""
    global _startup_hold
    if _startup_hold:
        _startup_hold = False
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
        from attnviz.gui.native_preload import preload_torch_libraries

        # the big native libraries first, with the GIL released: the import's own loading of them
        # would freeze the GUI thread for 0.3-0.8 s (see native_preload)
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


# Qt-free modules pyqtgraph imports: on a worker, before the GUI thread starts on pyqtgraph (if the
# worker were importing numpy when the GUI thread needs it, the GUI thread would wait for the whole import)
PYQTGRAPH_NEEDS = ("numpy", "xml.etree.ElementTree", "weakref", "warnings", "subprocess", "importlib.resources")


def pyqtgraph_plan() -> list:
    """Import what pyqtgraph needs that is Qt-free, then return pyqtgraph's import plan (a worker's job:
    see :mod:`attnviz.gui.stepped_import`)."""
    import importlib

    from attnviz.gui.plan_cache import cached_import_plan

    with gc_paused():
        for name in PYQTGRAPH_NEEDS:
            importlib.import_module(name)
    return cached_import_plan("pyqtgraph")


_PREFETCHES: dict[str, Future] = {}
_PREFETCH_QUEUE: list = []  # (future, fn, args) not started yet; one thread runs them in order
_PREFETCH_LOCK = threading.Lock()
_prefetch_thread: threading.Thread | None = None


def prefetch(key: str, fn, *args) -> None:
    """Run ``fn(*args)`` soon on a plain thread, before the window and its lanes exist; the job that
    needs the result takes it with :func:`prefetched` (once: a second prefetch of ``key`` does nothing).
    Prefetches run one after another, in the order asked (two threads importing at once would only
    fight over the import locks and the interpreter lock).

    Why: the GUI thread's start-up steps wait for pyqtgraph's and the views' import plans, which a worker
    makes after importing numpy and the views' Qt-free modules (~0.2 s of CPU). Started when the window
    was first shown, that work finished after the GUI thread had created PySide6's types, and the GUI
    thread sat idle meanwhile; started at launch it overlaps with building the window instead.
    """
    global _prefetch_thread
    with _PREFETCH_LOCK:
        if key in _PREFETCHES:
            return
        future: Future = Future()
        _PREFETCHES[key] = future
        _PREFETCH_QUEUE.append((future, fn, args))
        if _prefetch_thread is None:
            # not a daemon: the interpreter waits for it at exit rather than finalising under an import
            _prefetch_thread = threading.Thread(target=_run_prefetches, name="prefetch")
            _prefetch_thread.start()


def _run_prefetches() -> None:
    global _prefetch_thread
    while True:
        with _PREFETCH_LOCK:
            if not _PREFETCH_QUEUE:
                _prefetch_thread = None
                return
            future, fn, args = _PREFETCH_QUEUE.pop(0)
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever takes the result
            future.set_exception(exc)


def prefetched(key: str, fn, *args):
    """The result of the prefetch of ``key`` (waiting for it), or ``fn(*args)`` run here if none was
    started; a prefetch's result is taken once (a later call runs ``fn`` again)."""
    with _PREFETCH_LOCK:
        future = _PREFETCHES.pop(key, None)
    if future is None:
        return fn(*args)
    return future.result()
