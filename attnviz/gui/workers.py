"""Work that must not run on the GUI thread: model loading, model runs, imports, training.

Workers never touch widgets. A job's outcome travels back as a Qt signal, which Qt queues to the
GUI thread because the signal object is created there. User-fixable problems (``AttnvizError``)
arrive as their message; anything else as a one-line "unexpected error" (the traceback goes to
the log, never on screen).
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable

from PySide6.QtCore import QObject, QThread, QThreadPool, Signal

from attnviz.errors import AttnvizError

__all__ = ["gc_paused", "ensure_torch", "lower_thread_priority", "Job", "JobSignals", "ModelLane", "TrainingWorker",
           "describe_error", "run_job", "import_modules_job"]

log = logging.getLogger(__name__)


def describe_error(exc: BaseException) -> str:
    """The message shown to the user for an exception raised in a worker."""
    if isinstance(exc, AttnvizError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "out of memory: try a shorter input or a smaller model"
    log.error("unexpected error in a worker", exc_info=exc)
    return f"unexpected error ({type(exc).__name__}): {exc}"


_GC_LOCK = threading.Lock()
_gc_pauses = 0


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector around heavy imports, then freeze what they built.

    Why: a module import in a worker allocates hundreds of thousands of objects; every so often
    that triggers a full collection, which holds the GIL while it walks the whole heap (torch,
    Qt, pyqtgraph: 0.3–0.6 s here) and freezes the GUI thread with it. Imported modules live for
    the whole session, so after the import they are moved to the permanent generation
    (``gc.freeze``) and later collections no longer walk them.
    """
    global _gc_pauses
    with _GC_LOCK:
        _gc_pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0:
                gc.freeze()
                gc.enable()


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
        with gc_paused():
            import torch
        # leave one core to the GUI thread. Small models gain nothing from more threads anyway: on a
        # busy 2-core machine one coref run took 138 ms with 2 threads and 5 ms with 1.
        torch.set_num_threads(max(1, (os.cpu_count() or 2) - 1))
        _torch_ready = True


WORKER_NICENESS = 10


def lower_thread_priority() -> None:
    """Give the calling worker thread a lower OS priority than the GUI thread (Linux; else nothing).

    Why: on a 2-core laptop a training step and the GUI both want a core; the scheduler then lets
    a 30 ms plot repaint take 100+ ms. Niced workers yield the core to the GUI thread first and
    lose almost nothing when the GUI is idle. Qt's QThread priorities are ignored on Linux.
    """
    if not sys.platform.startswith("linux") or getattr(_thread_state, "niced", False):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), WORKER_NICENESS))
    except OSError:  # not permitted in some sandboxes: run at normal priority
        pass
    _thread_state.niced = True


_thread_state = threading.local()


class JobSignals(QObject):
    """Created on the GUI thread, emitted from the worker: Qt queues the call to the GUI thread."""

    result = Signal(object)
    error = Signal(str)
    finished = Signal()


_HUB: QObject | None = None


def _hub() -> QObject:
    """Parent of every JobSignals: Qt, not a Python reference count, decides when they die."""
    global _HUB
    if _HUB is None:
        _HUB = QObject()
    return _HUB


class Job:
    """``fn(*args, **kwargs)`` to run on a pool thread; ``signals`` report its result or error.

    Not a QRunnable on purpose: ``pool.start(job.run)`` lets Qt own the runnable, which it touches
    again after ``run`` returns; a Python-owned runnable could be freed by then (a rare crash).
    The signals object has a parent and is deleted on the GUI thread once ``finished`` has been
    handled (not by a direct ``finished → deleteLater`` connection, which can drop slots queued
    after it), so no QObject is ever destroyed from a worker thread.
    """

    def __init__(self, fn: Callable, *args, **kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.signals = JobSignals(_hub())  # deleted (deleteLater) by whoever handles "finished" last
        self.tag = None

    def start(self, pool: QThreadPool) -> None:
        pool.start(self.run)

    def run(self) -> None:
        try:
            lower_thread_priority()
            ensure_torch()
            out = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape into Qt's thread
            _emit(self.signals.error, describe_error(exc))
        else:
            _emit(self.signals.result, out)
        finally:
            _emit(self.signals.finished)


def _emit(signal, *args) -> None:
    try:
        signal.emit(*args)
    except RuntimeError:  # the signals object is gone (window closed, interpreter exiting): drop it
        pass


def run_job(fn: Callable, *args, on_result=None, on_error=None, pool: QThreadPool | None = None, **kwargs) -> Job:
    """Start ``fn`` on the global thread pool. Callbacks should be methods of GUI-thread QObjects."""
    job = Job(fn, *args, **kwargs)
    if on_result is not None:
        job.signals.result.connect(on_result)
    if on_error is not None:
        job.signals.error.connect(on_error)
    job.signals.finished.connect(job.signals.deleteLater)  # the last signal it sends
    job.start(pool or QThreadPool.globalInstance())
    return job


class ModelLane(QObject):
    """One job at a time for the model (torch modules are not re-entrant), newest request wins.

    Each job has a ``kind`` ("load", "trace"...). While a job runs, later requests wait; a newer
    request of the same kind replaces the waiting one, and a load drops waiting traces (they were
    for the old model). A result that a newer request of its kind has superseded is dropped
    (``stale`` counts them), so typing fast never shows an old sentence.
    """

    result = Signal(str, object)  # kind, value
    error = Signal(str, str)  # kind, message
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pending: dict[str, Job] = {}  # insertion order is run order
        self._running: Job | None = None
        self._generation: dict[str, int] = {}
        self.stale = 0

    @property
    def busy(self) -> bool:
        return self._running is not None or bool(self._pending)

    def submit(self, kind: str, fn: Callable, *args, **kwargs) -> None:
        gen = self._generation.get(kind, 0) + 1
        self._generation[kind] = gen
        job = Job(fn, *args, **kwargs)
        job.tag = (kind, gen)
        dropped = [self._pending.pop(k) for k in ({"trace", kind} if kind == "load" else {kind}) if k in self._pending]
        for old in dropped:  # never started: nothing will emit their "finished"
            old.signals.deleteLater()
        self._pending[kind] = job
        was_busy = self._running is not None
        self._start_next()
        if not was_busy:
            self.busy_changed.emit(True)

    def _start_next(self) -> None:
        if self._running is not None or not self._pending:
            return
        kind = next(iter(self._pending))
        job = self._pending.pop(kind)
        job.signals.result.connect(self._on_result)
        job.signals.error.connect(self._on_error)
        job.signals.finished.connect(self._on_finished)
        self._running = job
        job.start(self._pool)

    def _current(self, job: Job) -> bool:
        kind, gen = job.tag
        return self._generation.get(kind) == gen

    def _on_result(self, value) -> None:
        job = self._running
        if job is not None and self._current(job):
            self.result.emit(job.tag[0], value)
        else:
            self.stale += 1

    def _on_error(self, message: str) -> None:
        job = self._running
        if job is not None and self._current(job):
            self.error.emit(job.tag[0], message)

    def _on_finished(self) -> None:
        if self._running is not None:
            self._running.signals.deleteLater()
        self._running = None
        self._start_next()
        if self._running is None:
            self.busy_changed.emit(False)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the running job ends (used on shutdown and in tests)."""
        return self._pool.waitForDone(msecs)


class TrainingWorker(QThread):
    """Iterate ``attnviz.training.train(**kwargs)`` off the GUI thread.

    Progress events are batched: at most one ``progress`` signal per ``interval`` seconds (plus the
    snapshot and final events), so a model doing a thousand steps a second cannot flood the GUI.
    ``cancel()`` is honoured between training steps.
    """

    progress = Signal(list)  # list[Progress]
    failed = Signal(str)
    completed = Signal(object)  # the final Progress (its ``result`` is the trained LoadedModel)

    def __init__(self, train_kwargs: dict, interval: float = 0.05, parent: QObject | None = None):
        super().__init__(parent)
        self.train_kwargs = dict(train_kwargs)
        self.interval = interval
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self) -> None:
        batch: list = []
        last_emit = time.perf_counter()
        final = None
        try:
            lower_thread_priority()
            ensure_torch()
            with gc_paused():
                # torch.optim imports torch._dynamo (and sympy) on its first optimizer: ~800 modules,
                # imported here with the collector paused rather than in the middle of step 1
                import torch._dynamo  # noqa: F401

                from attnviz.tasks import get_task
                from attnviz.training.loop import train

                kwargs = dict(self.train_kwargs)
                if isinstance(kwargs.get("task"), str):
                    kwargs["task"] = get_task(kwargs["task"])
            for ev in train(cancel=self._cancel.is_set, **kwargs):
                batch.append(ev)
                now = time.perf_counter()
                if ev.done:
                    final = ev
                if ev.done or ev.snapshot or now - last_emit >= self.interval:
                    self.progress.emit(batch)
                    batch, last_emit = [], now
        except BaseException as exc:  # noqa: BLE001 - report, never crash the thread
            if batch:
                self.progress.emit(batch)
            self.failed.emit(describe_error(exc))
            return
        if batch:
            self.progress.emit(batch)
        self.completed.emit(final)


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
