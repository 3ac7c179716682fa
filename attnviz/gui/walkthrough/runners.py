"""How the what-if panel gets the model re-run without blocking the GUI thread.

A runner is ``run_async(kind, fn, on_result, on_error)``: call ``fn()`` somewhere else, then call
``on_result(value)`` or ``on_error(message)`` on the GUI thread. The what-if switches are attributes
of the shared torch model, so the main window passes :func:`lane_runner` of its ModelLane: one model
job at a time, the newest request of a kind wins, and no trace of the main view can run while a
switch is applied.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject

from attnviz.gui.workers import ModelLane

__all__ = ["LaneRunner", "lane_runner", "sync_runner"]


class LaneRunner(QObject):
    """Adapts a :class:`~attnviz.gui.workers.ModelLane` to the runner signature."""

    def __init__(self, lane: ModelLane, prefix: str = "whatif", parent: QObject | None = None):
        super().__init__(parent or lane)
        self.lane = lane
        self.prefix = prefix
        self._callbacks: dict[str, tuple[Callable, Callable]] = {}
        lane.result.connect(self._result)
        lane.error.connect(self._error)

    def __call__(self, kind: str, fn: Callable, on_result: Callable, on_error: Callable) -> None:
        key = f"{self.prefix}:{kind}"
        self._callbacks[key] = (on_result, on_error)  # the lane delivers only the newest job of a kind
        self.lane.submit(key, fn)

    def _result(self, kind: str, value) -> None:
        cb = self._callbacks.get(kind)
        if cb is not None:
            cb[0](value)

    def _error(self, kind: str, message: str) -> None:
        cb = self._callbacks.get(kind)
        if cb is not None:
            cb[1](message)


def lane_runner(lane: ModelLane, prefix: str = "whatif") -> LaneRunner:
    """The runner the main window gives the what-if panel: ``WhatIfPanel(run_async=lane_runner(self.lane))``."""
    return LaneRunner(lane, prefix)


def sync_runner(kind: str, fn: Callable, on_result: Callable, on_error: Callable) -> None:
    """Run on the calling thread (tests and scripts only: it blocks)."""
    from attnviz.gui.workers import describe_error

    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - reported like a worker would
        on_error(describe_error(exc))
        return
    on_result(value)
