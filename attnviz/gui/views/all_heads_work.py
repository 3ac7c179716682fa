"""The All heads grid's background work: statistics in two halves, a long input's every head pooled on the views'
lane, and how an export waits for it instead of computing it on the GUI thread.

A mixin of :class:`~attnviz.gui.views.model_view.ModelView` (its ``_halves``, titles, grid and notes), kept apart
so the view file holds the layout and the interaction. A view built for the app's export (``export_waits``,
:mod:`~attnviz.gui.views.export_wait`) leaves this work on the lane when asked to finish it
(``ensure_current``): the exporter waits for it, the window answering, and paints the figure once it is here.
"""

from __future__ import annotations

import numpy as np

from attnviz.gui.lane import report_progress
from attnviz.gui.views.export_wait import builds_waiting_figure
from attnviz.gui.views.model_summary import pool_maps, summarize_stats
from attnviz.gui.widgets.title import set_title

__all__ = ["AllHeadsWork", "weights_in"]


def weights_in(trace, part: str) -> int:
    """Attention weights of every layer and head of ``part``: what the statistics read."""
    n = trace.layers_in(part)
    return n * int(np.prod(trace.probs_shape(0, part))) if n else 0


class AllHeadsWork:
    """Background work of the All heads grid (mixed into ModelView, before BaseView)."""

    _pool_progress: tuple[int, int] | None = None  # (layers, of layers) pooled so far on the lane

    def _init_work(self) -> None:
        # read once, when the view is made: the app's exporter builds its figure within waiting_export()
        self.export_waits = builds_waiting_figure()

    def _pool_in_background(self, trace, part: str) -> None:
        """A long input's grid: every head's map is recomputed from q and k block by block, pooled and its
        statistics streamed on the views' worker; the title says so until they come (no grid meanwhile)."""
        self._halves.cancel()
        self._hold(False)
        self.thumbs = self.stats = None
        self._ensure_grid(0, 0)
        self._draw_marks()
        words = f"All heads · computing every head's map from q and k ({weights_in(trace, part):,} weights)"
        set_title(self.title_item, words + "…", self.style)
        self._set_caption("")
        self._pool_progress = (0, trace.layers_in(part))

        def progress(item) -> None:  # (layers done, layers): how many of the heads are drawn so far
            if self._work is not None:
                self._pool_progress = item
                set_title(self.title_item, f"{words}: {item[0] * trace.n_heads:,} of {item[1] * trace.n_heads:,} "
                                           f"heads done…", self.style)

        def ready(result) -> None:
            if isinstance(result, Exception):
                set_title(self.title_item, f"all heads unavailable: {result}", self.style)
                return
            self._pooled = (trace, part, result[0])
            self._draw_thumbs()
            self.stats = result[1]
            self._write_notes()
            self._set_title()
            self._draw_marks()

        def work():
            def tick(done: int, n: int) -> None:  # a newer trace or model dropped this job: stop computing it
                if not report_progress((done, n)):
                    raise InterruptedError("superseded")
            return pool_maps(trace, part, progress=tick), summarize_stats(trace, part)

        self.run_in_background(work, ready, progress)

    @property
    def background_pending(self) -> bool:
        return super().background_pending or self._halves.pending

    def cancel_background(self) -> None:
        super().cancel_background()
        self._halves.cancel()

    def ensure_current(self) -> None:
        self._halves.finish_now()
        if not self.export_waits:  # a waiting export's figure leaves the heads on the lane: the exporter waits
            super().ensure_current()

    def export_pending_text(self) -> str:
        """What the figure computes while an export waits for it (export_wait.pending_text)."""
        if self._long_active():
            return self._long_pending_text()
        if self._work is not None and self._pool_progress is not None and self.trace is not None:
            done, n = self._pool_progress
            h = self.trace.n_heads
            return f"computing heads {done * h}/{n * h} for the export (from q and k)"
        return ""

    def _hold(self, on: bool) -> None:
        """Keep the grid on screen as it is (``on``) until the new trace's statistics come, then draw it
        once, complete: drawn at once with "…" notes, BERT-base's 144 tiles were painted twice a
        keystroke (~12 ms of the GUI thread each). Meanwhile the grid shows the previous input's figure,
        whole and consistent, as it does while the model runs."""
        if self.canvas.updatesEnabled() == on:
            self.canvas.setUpdatesEnabled(not on)

    def _stats_ready(self, result) -> None:
        self._hold(False)
        if isinstance(result, Exception):
            set_title(self.title_item, f"statistics unavailable: {result}", self.style)
            return
        self.set_stats(result)
