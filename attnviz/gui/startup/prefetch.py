"""What the first map needs, started on a plain thread at launch; and the collector held until the first map.

Qt-free: the CLI starts both before PySide6 is imported. Why each exists, and what it buys: see
:mod:`attnviz.gui.startup` (switches ``prefetch`` and ``hold_gc``).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from attnviz.gui.heavy_imports import _pause_gc, _resume_gc, gc_paused, import_modules_job
from attnviz.gui.startup.switches import enabled

__all__ = ["VIEW_DEPENDENCIES", "EXTRA_VIEW_MODULES", "PYQTGRAPH_NEEDS", "views_plan", "pyqtgraph_plan",
           "prefetch_startup_imports", "prefetch", "prefetched", "hold_gc_for_startup", "release_startup_gc"]

# Qt-free modules the attention views import: loaded on a worker first, so importing the views on the
# GUI thread afterwards is quick. What only the Training and Walkthrough pages need waits until the
# first attention map is on screen (window.pages.PAGE_DEPENDENCIES): every import before it competes
# with torch's for the one interpreter lock, and delays the map.
VIEW_DEPENDENCIES = ("attnviz.capture", "attnviz.analysis", "attnviz.runtime")
# the view modules the views package does not import itself (discover_view_classes and the window add them)
EXTRA_VIEW_MODULES = ("attnviz.gui.views.dataset_view", "attnviz.gui.views.qk_embedding_view",
                      "attnviz.gui.views.compare_view")
# Qt-free modules pyqtgraph imports: on a worker, before the GUI thread starts on pyqtgraph (if the
# worker were importing numpy when the GUI thread needs it, the GUI thread would wait for the whole import)
PYQTGRAPH_NEEDS = ("numpy", "xml.etree.ElementTree", "weakref", "warnings", "subprocess", "importlib.resources")


def pyqtgraph_plan() -> list:
    """Import what pyqtgraph needs that is Qt-free, then return pyqtgraph's import plan (a worker's job)."""
    import importlib

    from attnviz.gui.startup.plan_cache import cached_import_plan

    with gc_paused():
        for name in PYQTGRAPH_NEEDS:
            importlib.import_module(name)
    return cached_import_plan("pyqtgraph")


def views_plan() -> list:
    """The import plan of the views package (Qt-free: reads files, or the cached plan; a worker's job)."""
    from attnviz.gui.startup.plan_cache import cached_import_plan

    return cached_import_plan("attnviz.gui.views", within="attnviz.gui", extra=EXTRA_VIEW_MODULES)


def prefetch_startup_imports() -> None:
    """Start what the window's start-up job will need, in its order (a second call does nothing; switched
    off, the job makes it all itself when the window is shown). The stored opening trace is read by the
    job itself: which model opens is the window's call."""
    if not enabled("prefetch"):
        return
    prefetch("pyqtgraph", pyqtgraph_plan)
    prefetch("view-dependencies", import_modules_job, list(VIEW_DEPENDENCIES))
    prefetch("views", views_plan)


_PREFETCHES: dict[str, Future] = {}
_PREFETCH_QUEUE: list = []  # (future, fn, args) not started yet; one thread runs them in order
_PREFETCH_LOCK = threading.Lock()
_prefetch_thread: threading.Thread | None = None


def prefetch(key: str, fn, *args) -> None:
    """Run ``fn(*args)`` soon on a plain thread, before the window and its lanes exist; the job that
    needs the result takes it with :func:`prefetched` (once: a second prefetch of ``key`` does nothing).
    Prefetches run one after another, in the order asked (two threads importing at once would only
    fight over the import locks and the interpreter lock)."""
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


_startup_hold = False


def hold_gc_for_startup() -> None:
    """Pause the collector from launch until :func:`release_startup_gc` (the first map is drawn; switched
    off: nothing). Released once, after which everything built so far is frozen like any paused import's."""
    global _startup_hold
    if not _startup_hold and enabled("hold_gc"):
        _startup_hold = True
        _pause_gc()


def release_startup_gc() -> None:
    """End :func:`hold_gc_for_startup`'s pause (idempotent; does nothing if none was held)."""
    global _startup_hold
    if _startup_hold:
        _startup_hold = False
        _resume_gc()
