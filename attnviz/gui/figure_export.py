"""The app's Export figure… and Copy figure, run so the window never freezes: :class:`FigureExport`.

An export used to build the figure at slide size, paint it and encode the file between two turns of
the event loop (a 1920×1080 PNG: 0.2–0.5 s with the window frozen). Here the steps on the GUI thread
get event-loop turns of their own — build the view (``make_figure_steps``); give it the trace and
paint it into an image or an in-memory SVG/PDF (``payload_steps``: the renderer the command line
and the screen use; a plain widget, the Training page, is laid out at the figure's size and painted a
few parts per turn, then put back: :func:`_fitted_page_steps`) — and the
slow part, encoding the PNG and writing the file (temporary name, then renamed), runs on a worker :class:`~attnviz.gui.lane.Lane`. Widgets and scenes are only touched on
the GUI thread; the worker gets a QImage or bytes.

A figure whose content is computed on the views' lane (a long input's All heads page: every head recomputed from
q and k, seconds a head) is built within :func:`~attnviz.gui.views.export_wait.waiting_export`: it leaves that
work on the lane, the exporter polls it between event-loop turns, says how far it is (``progress``) and paints
once it has arrived; ``cancel`` drops it. Nothing of it runs on the GUI thread.

One export or copy at a time: a second one is refused (``AttnvizError``) while one runs.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from attnviz.errors import AttnvizError
from attnviz.figures.render import (ExportOptions, export_format, fit_widget, payload_steps, render_payload,
                                    restore_widget, write_payload)
from attnviz.gui.lane import Lane, describe_error
from attnviz.gui.views.export_wait import figure_waits, pending_text, waiting_export

__all__ = ["FigureExport"]

# the steps yield this while the figure's heads are computed on the lane: the next look comes after this many ms
# rather than at once (a 0 ms timer would keep a core busy polling while the lane needs it)
WAIT = object()
WAIT_POLL_MS = 50
PAINTS = 3  # a figure that still asks for work after this many paints is refused (it never happens today)


def _payload_steps(fig, fmt: str, opts: ExportOptions):
    """A view's figure in one paint (it is quick); a plain widget (the Training page) a few parts per
    turn (:func:`~attnviz.figures.render.payload_steps`). Returns the payload."""
    if hasattr(fig, "render_figure"):
        return render_payload(fig, fmt, opts)
    return (yield from payload_steps(fig, fmt, opts))


def _fitted_page_steps(fig, previous, paint):
    """Paint a plain widget already at the figure's size (:func:`fit_widget`), then put it back, each
    heavy part in an event-loop turn of its own. Returns the payload.

    Its updates stay off but while a paint step runs (``QWidget.render`` needs them on): with them on
    between steps, the window repainted the page on screen at slide size in the turns meant for the
    event loop. Once painted it goes back to its screen size with updates still off, its layouts
    settle in the next turn, and only then is it repainted on screen (~0.1 s in one turn before).
    """
    restored = False
    try:
        yield  # resized: its layouts settle in this turn
        steps = paint(fig)
        while True:
            fig.setUpdatesEnabled(True)
            try:
                next(steps)
            except StopIteration as done:
                payload = done.value
                break
            finally:
                fig.setUpdatesEnabled(False)
            yield
        restore_widget(fig, previous)  # back to its size on screen, in its parent's layout
        restored = True
        yield  # its layouts settle at that size
        fig.setUpdatesEnabled(True)  # repainted on screen after this turn
        return payload
    finally:
        if not restored:  # cancelled or failed between steps
            fig.setUpdatesEnabled(True)
            restore_widget(fig, previous)


def _each_step_within(context, steps):
    """Run the generator ``steps`` with ``context()`` entered around each of its steps (never across the
    event-loop turns between them, when other views work as usual); returns what it returns."""
    try:
        while True:
            with context():
                try:
                    next(steps)
                except StopIteration as done:
                    return done.value
            yield
    finally:
        steps.close()


class FigureExport(QObject):
    """Runs one figure export (to a file) or copy (to the clipboard) at a time, in short steps.

    Signals: ``busy_changed(bool)`` when one starts and ends; ``done(value)`` with the written
    ``Path`` or the copied ``QImage``; ``failed(message)`` with a one-line message (the file is then
    untouched: nothing is renamed into place); ``progress(text)`` while it waits for the figure's heads.
    """

    busy_changed = Signal(bool)
    done = Signal(object)
    failed = Signal(object)
    progress = Signal(str)  # what the figure computes while the export waits ("computing heads 12/36 …")

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lane = Lane(self, threads=1, torch=False)  # PNG encoding and file writing: no torch
        self._timer = QTimer(self)  # a child: no step runs once the exporter (its window) is gone
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self._steps = None  # the generator of the GUI-thread steps still to run
        self._busy = False

    @property
    def busy(self) -> bool:
        return self._busy

    def export(self, view, trace, state, path, opts: ExportOptions, style) -> None:
        """Start writing ``view`` (re-drawn in ``style`` at ``opts`` size) to ``path``.

        Raises AttnvizError at once for a bad file name, folder or size, or while another export runs;
        later problems arrive as ``failed``.
        """
        self._refuse_if_busy()
        fmt = export_format(path, opts)
        self._begin(self._export_steps(view, trace, state, Path(path), fmt, opts, style))

    def copy(self, view, trace, state, opts: ExportOptions | None = None, style=None) -> None:
        """Start putting the figure on the clipboard as an image (1920×1080 light slide unless told)."""
        from attnviz.figures.registry import export_style

        self._refuse_if_busy()
        opts = opts or ExportOptions()
        opts.validate()
        self._begin(self._copy_steps(view, trace, state, opts, style or export_style()))

    def cancel(self) -> None:
        """Stop between two steps (the figure built so far is closed; a file being written still lands)."""
        self._timer.stop()
        if self._steps is not None:
            self._steps.close()
            self._steps = None
            if not self._lane.busy:
                self._set_busy(False)

    # -- the steps (GUI thread) ------------------------------------------------------------------------
    def _export_steps(self, view, trace, state, path: Path, fmt: str, opts, style):
        payload = yield from self._painted(view, trace, state, style, opts,
                                             lambda fig: _payload_steps(fig, fmt, opts))
        self._lane.submit(None, write_payload, path, payload, on_result=self._finish, on_error=self._fail)

    def _copy_steps(self, view, trace, state, opts, style):
        image = yield from self._painted(view, trace, state, style, opts, lambda fig: _payload_steps(fig, "png", opts))
        yield
        QApplication.clipboard().setImage(image)
        self._finish(image)

    def _painted(self, view, trace, state, style, opts, paint):
        """Build the figure in one turn, give it the trace and paint it in the next (see
        ``make_figure_steps``: the same turn keeps the file identical to the command line's); the
        figure is closed after. A figure with work on the lane is painted once that work is here: the
        first paint lays it out for the slide, which asks for the slide's page of heads; it is painted
        again once they have arrived (:mod:`~attnviz.gui.views.export_wait`)."""
        from attnviz.gui.dialogs.export_dialog import figure_steps, release_figure

        fig, selection = yield from _each_step_within(waiting_export, figure_steps(view, trace, state, style))
        try:
            previous = fit_widget(fig, opts)
            if previous is not None:
                return (yield from _fitted_page_steps(fig, previous, paint))
            for _ in range(PAINTS):
                yield from self._wait_for(fig)
                payload = yield from paint(fig)
                if not figure_waits(fig):
                    return payload
            raise AttnvizError("the figure kept asking for more heads to compute: export it again")
        finally:
            release_figure(fig, view)
            del selection

    def _wait_for(self, fig):
        """Event-loop turns until the figure's work on the lane has arrived, saying how far it is."""
        said = None
        while figure_waits(fig):
            text = pending_text(fig) + "… (Cancel stops it)"
            if text != said:
                said = text
                self.progress.emit(text)
            yield WAIT

    def _refuse_if_busy(self) -> None:
        if self._busy:
            raise AttnvizError("an export is still running: wait for its notice, then try again")

    def _begin(self, steps) -> None:
        self._steps = steps
        self._set_busy(True)
        self._timer.start()

    def _step(self) -> None:
        if self._steps is None:
            return
        try:
            waiting = next(self._steps)
        except StopIteration:  # the GUI thread's part is over (a worker may still be writing)
            self._steps = None
            return
        except Exception as exc:  # noqa: BLE001 - shown as a notice, never a traceback
            self._steps = None
            self._fail(describe_error(exc))
            return
        # the next step after the events waiting now (paints, input, timers); a while later when it waits
        self._timer.start(WAIT_POLL_MS if waiting is WAIT else 0)

    def _finish(self, value) -> None:
        self._set_busy(False)
        self.done.emit(value)

    def _fail(self, message) -> None:
        self._set_busy(False)
        self.failed.emit(message)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
