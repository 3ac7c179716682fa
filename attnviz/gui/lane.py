"""The one way the app runs work off the GUI thread: :class:`Lane` (and its :class:`Job`).

Cancellation, latest-wins (stale results dropped) and the workers' lower thread priority live here and
nowhere else. Workers never touch widgets. A job's outcome travels back as a Qt signal, which Qt queues
to the GUI thread because the lane's relay object is created there. User-fixable problems
(``AttnvizError``) arrive as their message; anything else as a one-line "unexpected error" (the
traceback goes to the log, never on screen). Split from :mod:`attnviz.gui.workers`, which re-exports it.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import threading
import time
import weakref
from typing import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThread, QThreadPool, Signal

from attnviz.errors import AttnvizError, Message
from attnviz.gui.heavy_imports import ensure_torch

__all__ = ["describe_error", "lower_thread_priority", "ALL", "Job", "current_job", "cancel_requested",
           "report_progress", "Lane", "all_lanes"]

log = logging.getLogger(__name__)


def describe_error(exc: BaseException) -> str:
    """The message shown to the user for an exception raised in a worker (an ``errors.Message``: its
    ``details`` carry the long version for the notice's Details… button)."""
    if isinstance(exc, AttnvizError):
        return Message.of(exc)
    if isinstance(exc, MemoryError):
        return "out of memory: try a shorter input or a smaller model"
    log.error("unexpected error in a worker", exc_info=exc)
    return f"unexpected error ({type(exc).__name__}): {exc}"


WORKER_NICENESS = 10
_thread_state = threading.local()  # per worker thread: niced yet, the job it runs


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


ALL = object()  # ``Lane.cancel(ALL)``: every job of the lane


class Job:
    """One call of ``fn(*args, **kwargs)`` on a lane. Built by :meth:`Lane.submit`, never by hand.

    ``request_cancel()`` asks the function to stop (it polls :func:`cancel_requested`); the lane
    still delivers what it returns. ``result()`` blocks until the function has returned (benchmarks
    and scripts only: on the GUI thread it freezes the window).
    """

    def __init__(self, lane: "Lane", kind, fn: Callable, args, kwargs, callbacks: dict, owner):
        self.lane, self.kind, self.fn, self.args, self.kwargs = lane, kind, fn, args, kwargs
        self.callbacks = callbacks
        self.owner = owner
        self.dropped = False  # nobody wants the outcome any more (superseded or cancelled)
        self._cancel = threading.Event()
        self._ended = threading.Event()
        self._outcome: tuple[bool, object] | None = None

    def request_cancel(self) -> None:
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def result(self, timeout: float | None = None):
        """The function's return value once it has run (raises what it raised as a RuntimeError).

        On the GUI thread this keeps processing events while it waits: a lane starts its next job
        there, so a job queued behind another would otherwise never start."""
        deadline = None if timeout is None else time.monotonic() + timeout
        on_gui = QThread.currentThread() is self.lane.thread()
        while not self._ended.wait(0.005 if on_gui else timeout):
            if deadline is not None and time.monotonic() > deadline or not on_gui:
                raise TimeoutError("the job has not finished")
            QCoreApplication.processEvents()
        ok, value = self._outcome
        if not ok:
            raise RuntimeError(value)
        return value


def current_job() -> Job | None:
    """The lane job running on the calling thread (None on the GUI thread)."""
    return getattr(_thread_state, "job", None)


def cancel_requested() -> bool:
    """True once the job running on this thread was asked to stop (poll it between steps)."""
    job = current_job()
    return job is not None and job.cancel_requested


def report_progress(item) -> bool:
    """From inside a running job (a plain function, not a generator): deliver ``item`` like a generator's
    item (``on_progress`` / ``progress`` on the GUI thread, queued), dropped with the job when it is
    superseded or cancelled. False when there is no job on this thread or nobody wants its outcome."""
    job = current_job()
    if job is None or job.dropped:
        return False
    _emit(job.lane._relay.yielded, job, item)
    return True


class _Relay(QObject):
    """Created on the GUI thread, emitted from workers: Qt queues the calls to the GUI thread."""

    ended = Signal(object, bool, object)  # job, ok, value or message
    yielded = Signal(object, object)  # job, item


class Lane(QObject):
    """The one way the app runs work off the GUI thread.

    A job has a ``kind``. Jobs of the same kind are *latest-wins*: a newer request replaces one
    still waiting, and the result of one already running is dropped when it arrives (``stale``
    counts them), so typing fast never shows an old sentence. ``kind=None`` jobs are independent.
    ``supersedes`` makes a job also replace other kinds (a new model makes waiting traces stale).

    At most ``threads`` jobs run at once (1: in submission order, which keeps torch modules, not
    re-entrant, to one thread at a time). Every worker thread runs at a lower OS priority than the
    GUI thread, and imports torch safely first when ``torch`` is set. A generator function's items
    are delivered one by one (``on_progress`` / ``progress``) and its return value as the result.
    ``cancel(kind)`` drops waiting jobs, drops the running ones' results and asks them to stop.

    Outcomes are delivered on the GUI thread: to the job's ``on_result`` / ``on_error`` /
    ``on_progress`` / ``on_finished`` callbacks and to the ``result`` / ``error`` / ``progress``
    signals (with the kind). Errors arrive as one-line messages (:func:`describe_error`). With an
    ``owner`` QObject, nothing is delivered once that object has been deleted.
    """

    result = Signal(object, object)  # kind, value
    error = Signal(object, object)  # kind, message (an errors.Message keeps its details through the signal)
    progress = Signal(object, object)  # kind, item
    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, threads: int = 1, torch: bool = True,
                 pool: QThreadPool | None = None):
        super().__init__(parent)
        if pool is None:
            pool = QThreadPool(self)
            pool.setMaxThreadCount(threads)
        self._pool = pool
        self._threads = max(1, threads)
        self._torch = torch
        self._relay = _Relay(self)
        self._relay.ended.connect(self._ended)
        self._relay.yielded.connect(self._yielded)
        self._pending: list[Job] = []  # run order
        self._running: list[Job] = []
        self._latest: dict = {}  # kind -> newest Job of that kind
        self.stale = 0
        _LANES.add(self)

    # -- asking -----------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return bool(self._running or self._pending)

    def submit(self, kind, fn: Callable, *args, on_result=None, on_error=None, on_progress=None,
               on_finished=None, owner: QObject | None = None, supersedes=(), **kwargs) -> Job:
        """Queue ``fn(*args, **kwargs)``; returns its :class:`Job`.

        Without an ``owner``, the QObject whose bound method a callback is becomes the owner (as a
        signal connected to a slot is cut when the receiver is deleted).
        """
        if owner is None:
            owner = next((cb.__self__ for cb in (on_result, on_error, on_progress, on_finished)
                          if isinstance(getattr(cb, "__self__", None), QObject)), None)
        job = Job(self, kind, fn, args, kwargs,
                  {"result": on_result, "error": on_error, "progress": on_progress, "finished": on_finished},
                  owner)
        replaced = () if kind is None else {kind, *supersedes}
        for k in replaced:
            old = self._latest.get(k)
            if old is not None:
                old.dropped = True
                old.request_cancel()
            if k != kind:
                self._latest.pop(k, None)
        self._pending = [j for j in self._pending if not j.dropped]
        if kind is not None:
            self._latest[kind] = job
        self._pending.append(job)
        was_busy = bool(self._running)
        self._start_next()
        if not was_busy:
            self.busy_changed.emit(True)
        return job

    def cancel(self, kind=ALL) -> None:
        """Drop waiting jobs of ``kind`` (``ALL``: every kind), drop running ones' results, ask them to stop."""
        for job in self._pending + self._running:
            if kind is ALL or job.kind == kind:
                job.dropped = True
                job.request_cancel()
        self._pending = [j for j in self._pending if not j.dropped]
        if not self.busy:
            self.busy_changed.emit(False)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the running jobs end (shutdown, tests); waiting jobs are not started."""
        return self._pool.waitForDone(msecs)

    # -- running ------------------------------------------------------------------------------------
    def _start_next(self) -> None:
        while self._pending and len(self._running) < self._threads:
            job = self._pending.pop(0)
            self._running.append(job)
            # a plain callable, not a QRunnable: Qt owns what it wraps it in, so nothing Python-owned
            # is touched by Qt after the call returns
            self._pool.start(lambda job=job: self._run(job))

    def _run(self, job: Job) -> None:
        """On the worker thread."""
        _thread_state.job = job
        ok, value = False, None
        try:
            lower_thread_priority()
            if self._torch:
                ensure_torch()
            value = job.fn(*job.args, **job.kwargs)
            if inspect.isgenerator(value):
                value = self._drain(job, value)
            ok = True
        except BaseException as exc:  # noqa: BLE001 - nothing may escape into Qt's thread
            value = describe_error(exc)
        finally:
            _thread_state.job = None
            job._outcome = (ok, value)
            job._ended.set()
            _emit(self._relay.ended, job, ok, value)

    def _drain(self, job: Job, gen):
        while True:
            if job.dropped:  # nobody will read the items: stop between two of them
                gen.close()
                return None
            try:
                item = next(gen)
            except StopIteration as stop:
                return stop.value
            _emit(self._relay.yielded, job, item)

    # -- delivering (GUI thread) ----------------------------------------------------------------------
    def _wanted(self, job: Job) -> bool:
        if job.dropped:
            return False
        owner = job.owner
        return owner is None or shiboken6.isValid(owner)

    def _yielded(self, job: Job, item) -> None:
        if self._wanted(job):
            self._call(job, "progress", item)
            self.progress.emit(job.kind, item)

    def _ended(self, job: Job, ok: bool, value) -> None:
        if job in self._running:
            self._running.remove(job)
        if self._latest.get(job.kind) is job:
            del self._latest[job.kind]
        self._start_next()
        try:
            if not self._wanted(job):
                self.stale += 1
            elif ok:
                self._call(job, "result", value)
                self.result.emit(job.kind, value)
            else:
                self._call(job, "error", value)
                self.error.emit(job.kind, value)
            if job.owner is None or shiboken6.isValid(job.owner):
                self._call(job, "finished")
        finally:
            if not self.busy:
                self.busy_changed.emit(False)

    @staticmethod
    def _call(job: Job, what: str, *args) -> None:
        fn = job.callbacks.get(what)
        if fn is not None:
            fn(*args)


def _emit(signal, *args) -> None:
    try:
        signal.emit(*args)
    except RuntimeError:  # the lane is gone (window closed, interpreter exiting): drop it
        pass


_LANES: "weakref.WeakSet[Lane]" = weakref.WeakSet()


def all_lanes() -> list[Lane]:
    """Every lane still alive (application exit waits for them)."""
    return list(_LANES)
