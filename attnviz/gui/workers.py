"""Work that must not run on the GUI thread: model loading, model runs, imports, training.

Everything goes through one class, :class:`Lane` (in :mod:`attnviz.gui.lane`, re-exported here with the
heavy-import helpers of :mod:`attnviz.gui.heavy_imports`): cancellation, latest-wins (stale results
dropped) and the workers' lower thread priority live there and nowhere else. This module holds the
app's shared lanes, the one-off ``run_job`` and the training worker.
"""

from __future__ import annotations

import atexit
import logging
import time
from typing import Callable

import shiboken6
from PySide6.QtCore import QObject, QThreadPool, Signal

from attnviz.gui.gc_pause import gc_paused
from attnviz.gui.heavy_imports import ensure_torch, import_modules_job
from attnviz.gui.lane import (ALL, Job, Lane, all_lanes, cancel_requested, current_job, describe_error,
                              lower_thread_priority, report_progress)

__all__ = ["gc_paused", "ensure_torch", "lower_thread_priority", "describe_error", "Lane", "Job", "ALL",
           "ModelLane", "current_job", "cancel_requested", "report_progress", "background_lane", "views_lane",
           "tiles_lane",
           "wait_for_workers",
           "run_job", "batched", "train_job", "TrainingWorker", "import_modules_job"]

log = logging.getLogger(__name__)


_SHARED: dict[str, Lane] = {}


def background_lane() -> Lane:
    """The app's lane for independent one-off jobs (imports, scans, file reads): Qt's global pool."""
    if "background" not in _SHARED:
        pool = QThreadPool.globalInstance()
        _SHARED["background"] = Lane(threads=pool.maxThreadCount(), pool=pool)
    return _SHARED["background"]


def views_lane() -> Lane:
    """The views' lane: numpy work (pooling ahead, statistics) on one thread, torch never imported."""
    if "views" not in _SHARED:
        _SHARED["views"] = Lane(threads=1, torch=False)
    return _SHARED["views"]


def tiles_lane() -> Lane:
    """The zoomed head map's tiles, on a thread of their own: on the views' lane they waited behind a long
    map's overview (13-17 s for one head of 16,384 tokens), so a zoom showed no exact value meanwhile."""
    if "tiles" not in _SHARED:
        _SHARED["tiles"] = Lane(threads=1, torch=False)
    return _SHARED["tiles"]


def wait_for_workers(msecs: int = 5000) -> None:
    """Drop waiting jobs of every lane and give running ones ``msecs`` to end (application exit)."""
    for lane in all_lanes():
        if shiboken6.isValid(lane):
            lane.cancel(ALL)
            lane.wait(msecs)


# A Qt pool thread still running Python code (a warm-up import) while the interpreter finalises crashes
# the process. ``run_app`` waits already; this covers scripts, notebooks and tests that make a window.
atexit.register(wait_for_workers, 10000)


def run_job(fn: Callable, *args, on_result=None, on_error=None, **kwargs) -> Job:
    """Run ``fn`` on :func:`background_lane`; callbacks run on the GUI thread."""
    return background_lane().submit(None, fn, *args, on_result=on_result, on_error=on_error, **kwargs)


ModelLane = Lane  # the window's model lane is a plain one-thread Lane


def batched(events, interval: float = 0.05):
    """Yield lists of ``events``: at most one list per ``interval`` seconds, plus one at each snapshot
    and at the end, so a model doing a thousand steps a second cannot flood the GUI. Returns the
    final event (``done``)."""
    batch: list = []
    last = time.perf_counter()
    final = None
    try:
        for ev in events:
            batch.append(ev)
            now = time.perf_counter()
            if getattr(ev, "done", False):
                final = ev
            if getattr(ev, "done", False) or getattr(ev, "snapshot", None) or now - last >= interval:
                yield batch
                batch, last = [], now
    finally:
        if batch:  # also on an error: the steps done so far are drawn before the message
            yield batch
    return final


def train_job(train_kwargs: dict, interval: float = 0.05):
    """Iterate ``attnviz.training.train(**train_kwargs)`` in batches; stops between steps on cancel."""
    with gc_paused():
        # torch.optim imports torch._dynamo (and sympy) on its first optimizer: ~800 modules,
        # imported here with the collector paused rather than in the middle of step 1
        import torch._dynamo  # noqa: F401

        from attnviz.tasks import get_task
        from attnviz.training.loop import train

        kwargs = dict(train_kwargs)
        if isinstance(kwargs.get("task"), str):
            kwargs["task"] = get_task(kwargs["task"])
    return (yield from batched(train(cancel=cancel_requested, **kwargs), interval))


class TrainingWorker(QObject):
    """A training run on its own :class:`Lane`, with the signals the training panel listens to.

    ``progress(list)`` carries batches of events, ``completed(final)`` the final event (its
    ``result`` is the trained LoadedModel), ``failed(message)`` an error; ``finished`` comes last.
    ``cancel()`` is honoured between training steps (the final event says so).
    """

    progress = Signal(list)
    failed = Signal(str)
    completed = Signal(object)
    finished = Signal()

    def __init__(self, train_kwargs: dict, interval: float = 0.05, parent: QObject | None = None):
        super().__init__(parent)
        self.train_kwargs = dict(train_kwargs)
        self.interval = interval
        self.lane = Lane(self)
        self.job: Job | None = None

    def start(self) -> None:
        self.job = self.lane.submit("train", train_job, self.train_kwargs, self.interval,
                                    on_progress=self.progress.emit, on_result=self.completed.emit,
                                    on_error=self.failed.emit, on_finished=self.finished.emit)

    def cancel(self) -> None:
        if self.job is not None:
            self.job.request_cancel()

    @property
    def cancelled(self) -> bool:
        return self.job is not None and self.job.cancel_requested

    def isRunning(self) -> bool:  # noqa: N802 - the QThread name the panel used
        return self.lane.busy

    def wait(self, msecs: int = 30000) -> bool:
        return self.lane.wait(msecs)


