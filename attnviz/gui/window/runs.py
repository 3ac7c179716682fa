"""The window's runs on the model lane: an input's run (text or image) goes out, its layer previews and
its result or error come back.

A component of :class:`attnviz.gui.window.main_window.MainWindow` (split from it along this seam: what is
sent to the lane and what the lane sends back). It reads the window's loaded model, selection and input
panel, hands a loaded model to ``model_loading`` and a trace to ``shown_trace``, and shows a failure as a
notice, never a traceback.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

from attnviz.gui.panels.model_jobs import run_input_job
from attnviz.gui.window.refusal_notice import refusal_notice

__all__ = ["Runs"]


class Runs:
    """Sends the window's input runs to its lane and routes what comes back."""

    # a run whose trace has not come this long after it started (a long input's forward) has what shows the
    # previous input covered (running_covers.py): not at once, a short input's trace comes within a keystroke
    COVER_AFTER_MS = 400

    def __init__(self, win):
        self.win = win
        self._run = 0  # runs started; the newest one's trace is pending while _pending
        self._pending = False
        self._covers = None  # RunningCovers, made at the first cover (the window's body is built after Runs)
        lane = win.lane
        lane.result.connect(self.result)
        lane.error.connect(self.error)
        lane.progress.connect(self.progress)
        lane.busy_changed.connect(self.busy)

    # -- out -----------------------------------------------------------------------------------------
    def run_text(self, text: str) -> None:
        win = self.win
        if win.loaded is not None and win.loaded.config.kind != "vit":
            self.head_maps(lambda view: view.drop_preview())
            self._started()
            win.lane.submit("trace", run_input_job, win.loaded, text=text, target=win.input_panel.target,
                            preview_layer=self.preview_layer())

    def run_image(self, image) -> None:
        win = self.win
        if win.loaded is None:
            return
        if isinstance(image, str):
            win.settings.add_recent("images", image)
        self.head_maps(lambda view: view.drop_preview())
        self._started()
        win.lane.submit("trace", run_input_job, win.loaded, image=image, preview_layer=self.preview_layer())

    def _started(self) -> None:
        self._run += 1
        self._pending = True
        run = self._run
        QTimer.singleShot(self.COVER_AFTER_MS, self.win, lambda: self._cover_if_pending(run))

    def _cover_if_pending(self, run: int) -> None:
        if run == self._run and self._pending:
            self.covers.cover()

    def load_started(self, name: str) -> None:
        """A model load was asked for: it drops a running input's run (its trace never comes), so its covers
        say the model loads, and a run still too young to be covered is not covered as running any more."""
        from attnviz.gui.window.running_covers import loading_texts

        self._pending = False
        if self._covers is not None and self._covers.up:
            self._covers.cover(loading_texts(name))

    def _ended(self) -> None:
        self._pending = False
        if self._covers is not None:
            self._covers.uncover()

    @property
    def covers(self):
        """What covers the previous input's figures while a run goes on (:class:`RunningCovers`)."""
        if self._covers is None:
            from attnviz.gui.window.running_covers import RunningCovers

            self._covers = RunningCovers(self.win)
        return self._covers

    def preview_layer(self) -> int | None:
        """The selected layer, drawn by the head map while a Hugging Face model's forward still runs."""
        win = self.win
        return win.selection.layer if win.loaded.info.get("source") == "huggingface" else None

    # -- back ----------------------------------------------------------------------------------------
    def progress(self, kind, item) -> None:
        # the lane drops the items of a superseded run (new input, new model): this one is current
        if kind != "trace":
            return
        from attnviz.capture.preview import LayerPreview  # numpy: not imported while the window builds

        selection = self.win.selection
        if isinstance(item, LayerPreview) and item.layer == selection.layer:
            self.head_maps(lambda view: view.show_preview(item, selection.head))

    def head_maps(self, do) -> None:
        """Call ``do(view)`` for every head map view of the window."""
        from attnviz.gui.views.head_map_view import HeadMapView  # not imported while the window builds

        for view in self.win.views_area.views:
            if isinstance(view, HeadMapView):
                do(view)

    def result(self, kind: str, value) -> None:
        if kind == "load":
            self._ended()  # a load supersedes a running trace (its result never comes): its covers go (before the
            self.win.model_loading.model_loaded(value)  # new model's example starts a run of its own)
        elif kind == "trace":
            self._ended()
            self.win.shown_trace.show_run(value)

    def error(self, kind: str, message: str) -> None:
        win = self.win
        if kind in ("trace", "load"):  # a failed load superseded a running trace too: nothing runs any more
            self._ended()
        win.pages.prepare(first_run_over=True)  # training a model is the way out of a failed load
        if kind == "load":
            win.notify(f"cannot load the model: {message}", "error", getattr(message, "details", ""))
            win.model_panel.set_current(win.model_ref)
            win.model_loading.uncover()  # the model still loaded and its figures, as they were
            if win.loaded is None:
                win.statusBar().showMessage("no model loaded: pick one in the Model panel or open a folder")
        elif kind == "trace" and win.input_panel.mode == "text":
            # the box shows the new text: the views would show another input's figures, so clear them
            # (an image that cannot be decoded never replaces the picture on screen: that trace stays)
            win.clear_shown(refusal_notice(message, cleared=True),
                            empty_reason=f"the input was refused: {refusal_notice(message, cleared=False)}")
        else:
            if kind == "trace":  # the picture on screen stays, and so does its caption
                win.input_panel.image.reject_pending()
                self.head_maps(lambda view: view.mark_running(note=""))  # its map is the current input's again
            win.notify(message, "warning")

    def busy(self, busy: bool) -> None:
        self.win.busy_label.setText("running…" if busy else "")
