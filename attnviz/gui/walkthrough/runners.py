"""How the what-if panel gets the model re-run without blocking the GUI thread.

A runner is ``run_async(kind, fn, on_result, on_error)``: call ``fn()`` somewhere else, then call
``on_result(value)`` or ``on_error(message)`` on the GUI thread. The what-if switches are attributes
of the shared torch model, so the main window passes :func:`lane_runner` of its model
:class:`~attnviz.gui.workers.Lane`: one model job at a time, the newest request of a kind wins, and no
trace of the main view can run while a switch is applied.
"""

from __future__ import annotations

from typing import Callable

from attnviz.gui.workers import Lane

__all__ = ["lane_runner", "sync_runner"]


def lane_runner(lane: Lane, prefix: str = "whatif") -> Callable:
    """The runner the main window gives the what-if panel: ``WhatIfPanel(run_async=lane_runner(self.lane))``."""

    def run_async(kind: str, fn: Callable, on_result: Callable, on_error: Callable) -> None:
        lane.submit(f"{prefix}:{kind}", fn, on_result=on_result, on_error=on_error)

    return run_async


def sync_runner(kind: str, fn: Callable, on_result: Callable, on_error: Callable) -> None:
    """Run on the calling thread (tests and scripts only: it blocks)."""
    from attnviz.gui.workers import describe_error

    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - reported like a worker would
        on_error(describe_error(exc))
        return
    on_result(value)
