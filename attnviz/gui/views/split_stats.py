"""A long trace's All heads statistics computed in two halves of the layers at once.

BERT-base at T = 128: entropy and distance of 144 heads take ~35 ms on one worker (mostly float64
logarithms), the last thing a keystroke waited for. The first half of the layers runs on the view's own
lane (:meth:`BaseView.run_in_background`), the second on the background lane, and the view gets the two
joined (:func:`~attnviz.gui.views.model_summary.join_stats`): every layer's numbers are computed on
their own, so they are those of the whole computation.
"""

from __future__ import annotations

from typing import Callable

from attnviz.gui.views.model_summary import join_stats, stats_or_error, summarize_stats

__all__ = ["StatsInHalves"]


class StatsInHalves:
    """Runs and joins the two halves for ``view``; only the newest request is delivered."""

    def __init__(self, view):
        self.view = view
        self.job = None  # the second half's lane job, until it is delivered
        self._second = None  # (trace, part, layers, callback) of that job: to finish it here if asked
        self._token = None

    @property
    def pending(self) -> bool:
        """True while the second half has not been delivered."""
        return self.job is not None

    def start(self, trace, part: str, done: Callable[[object], None]) -> None:
        """Compute ``summarize_stats(trace, part)`` in two halves; ``done(stats or exception)`` on the GUI
        thread once both are in (a trace of one layer: in one piece on the view's lane)."""
        self.cancel()
        n = trace.layers_in(part)
        if n < 2:
            self.view.run_in_background(lambda: summarize_stats(trace, part), done)
            return
        split = (n + 1) // 2
        token = self._token = object()
        halves: dict[int, object] = {}

        def got(i: int, result) -> None:
            if self._token is not token:  # a newer trace (or a cancel) came meanwhile
                return
            if i == 1:
                self.job = self._second = None
            halves[i] = result
            if len(halves) == 2:
                self._token = None
                done(join_stats(halves[0], halves[1]))

        first, second = range(split), range(split, n)
        self.view.run_in_background(lambda: stats_or_error(trace, part, first), lambda r: got(0, r))
        from attnviz.gui.workers import background_lane

        self._second = (trace, part, second, lambda r: got(1, r))
        self.job = background_lane().submit(("stats-half", id(self.view)), stats_or_error, trace, part, second,
                                            on_result=lambda r: got(1, r), owner=self.view)

    def cancel(self) -> None:
        """Nothing of the current request is delivered any more (the first half: the view cancels it)."""
        self._token = None
        if self.job is not None:
            self.job.lane.cancel(self.job.kind)
        self.job = self._second = None

    def finish_now(self) -> None:
        """Compute the second half on this thread now (an export must be complete); the view's
        ``ensure_current`` then finishes the first."""
        if self.job is None:
            return
        trace, part, layers, callback = self._second
        self.job.lane.cancel(self.job.kind)  # its result, if it still comes, is dropped
        callback(stats_or_error(trace, part, layers))
