"""Training panel: pick a task and settings, train in a worker with live curves, then replay attention.

The loop is :func:`attnviz.training.train` — the same generator the CLI prints — run by a
:class:`~attnviz.gui.workers.TrainingWorker`; cancelling takes effect between steps.

Building the panel is ~0.1 s of the GUI thread (two pyqtgraph plots with their menus, the replay's
head map): ``TrainingPanel(..., stepped=True)`` builds it in parts, one per ``build_step()``,
so the window can spread them over event-loop turns (issue 18: no freeze over 100 ms); it is put on
screen only once ``built``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QStandardPaths, Qt, QTimer, Signal
from PySide6.QtWidgets import QGroupBox, QScrollArea, QSplitter, QToolButton, QVBoxLayout, QWidget

from attnviz.gui.panels.attention_timeline import AttentionTimeline
from attnviz.gui.panels.compact_layout import is_compact
from attnviz.gui.panels.replay_presented import present_replay_controls
from attnviz.gui.panels.training_form import TrainingFormMixin, task_defaults
from attnviz.gui.stepped_build import SteppedBuild
from attnviz.gui.style import ViewStyle
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.workers import TrainingWorker, run_job
from attnviz.tasks.metric_names import format_metrics

__all__ = ["TrainingPanel", "default_run_dir", "task_defaults", "REDRAW_MS"]

LOSS_TITLE, ACC_TITLE = "training loss (cross-entropy, nats)", "batch accuracy"
# a run saves this many checkpoints on its way (issue 36, finding 12): one cancelled part-way keeps the
# model of its last one, which "Open trained model" opens (without them a cancel kept nothing to open)
CHECKPOINTS = 10
REDRAW_MS = 250  # live curves: four updates a second read as "live" and leave the GUI thread free


def load_snapshots_job(path: str):
    from attnviz.training.snapshots import load_snapshots

    return load_snapshots(path)


def default_run_dir(task: str) -> Path:
    """A new folder for a training run under the per-user data location."""
    base = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation) or Path.home())
    return base / "runs" / f"{task}-{time.strftime('%Y%m%d-%H%M%S')}"


class TrainingPanel(SteppedBuild, TrainingFormMixin, QWidget):
    """Emits ``open_model(path)`` when the user wants the trained model in the main views.

    Parameters
    ----------
    task_names : the tasks the form offers.
    style : the views' ViewStyle (None: pyqtgraph's defaults).
    stepped : build only the bare widget now; the caller finishes it with ``build_step`` (a part per
        call, each ≤ ~25 ms here) or ``finish_building`` (the rest at once) before showing it
        (:class:`attnviz.gui.stepped_build.SteppedBuild`).
    """

    open_model = Signal(str)
    notice = Signal(str, str)  # text, level
    finished = Signal(object)  # final Progress (tests and the status bar)

    def __init__(self, task_names: list[str], style=None, parent=None, *, stepped: bool = False):
        super().__init__(parent)
        self.worker: TrainingWorker | None = None
        self.out_dir: Path | None = None
        self.steps, self.loss, self.acc = [], [], []
        self._defaults: dict = {}
        self._last = None
        self._loss_top = 0.0
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(REDRAW_MS)
        self._redraw_timer.timeout.connect(self._redraw)
        self._start_building(self._build_steps(list(task_names), style), stepped)

    # -- building ------------------------------------------------------------------------------------
    def _build_steps(self, task_names: list[str], style):
        """The parts in the order the one-go constructor built them (same widgets, same stacking)."""
        self._build_form(task_names)
        yield
        self.plots = pg.GraphicsLayoutWidget(self)  # a child: a panel deleted half-built takes it along
        # one above the other in a column beside the replay: each curve gets the column's width
        # titles that wrap in a narrow column (a plot's own title is one line 30 px tall and claims its
        # text's width: with the form shown at 1280×720 it was cut to "training loss (", the axes with it)
        self.loss_title, self.acc_title = make_title(), make_title()
        self.plots.addItem(self.loss_title, row=0, col=0)
        self.loss_plot = self.plots.addPlot(row=1, col=0)
        yield  # a pyqtgraph PlotItem with its context menu is ~20 ms: one per step
        self.plots.addItem(self.acc_title, row=2, col=0)
        self.acc_plot = self.plots.addPlot(row=3, col=0)
        for item, text in ((self.loss_title, LOSS_TITLE), (self.acc_title, ACC_TITLE)):
            set_title(item, text, style or ViewStyle())
        self._set_up_plots()
        yield
        self.timeline = AttentionTimeline(style=style, parent=self)
        yield
        self._lay_out()
        self.task_box.currentTextChanged.connect(self._task_changed)
        self._task_changed(self.task_box.currentText())
        if style is not None:
            self.set_style(style)

    def _set_up_plots(self) -> None:
        self.acc_plot.setYRange(0, 1)
        self.acc_plot.setXLink(self.loss_plot)
        self.acc_plot.setLabel("bottom", "step")
        self.loss_plot.setLabel("bottom", "step")
        for plot in (self.loss_plot, self.acc_plot):
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setMouseEnabled(x=False, y=False)  # ranges follow the run, not the mouse
            plot.enableAutoRange(False)
            plot.setDownsampling(auto=True, mode="peak")
            plot.setClipToView(True)
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen("#CC6677", width=2))
        self.acc_curve = self.acc_plot.plot(pen=pg.mkPen("#117733", width=2))

    def _lay_out(self) -> None:
        box = QGroupBox("How attention emerged (snapshots taken during training, live while it runs)", self)
        QVBoxLayout(box).addWidget(self.timeline)
        # the form on the left; the curves and the replay share the rest side by side, each with room to
        # be read (under the form, the curves were ~50 px tall; above the replay, its map got 12 rows in
        # ~100 px): the replay's square map takes the whole height, the curves a column beside it
        plots_box = QGroupBox("Training curves", self)
        pl = QVBoxLayout(plots_box)
        pl.setContentsMargins(4, 4, 4, 4)
        # a compact window (a 1280×720 projector) folds the form away so the replay gets its width (at 21
        # keys the map named every 2nd); this button, above the curves, costs the replay no height
        self.form_toggle = QToolButton(plots_box)
        self.form_toggle.setCheckable(True)
        self.form_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.form_toggle.setArrowType(Qt.ArrowType.LeftArrow)
        self.form_toggle.setText("Train a model…")
        self.form_toggle.setToolTip("Show the training settings (folded away at this window size so the "
                                    "replay's map can name every token)")
        self.form_toggle.toggled.connect(lambda _on: self._arrange())
        self.form_toggle.hide()
        pl.addWidget(self.form_toggle)
        self._build_run_line(plots_box)
        pl.addWidget(self.run_line)
        pl.addWidget(self.plots)
        self.plots.setMinimumHeight(200)
        self.plots.setMinimumWidth(120)
        right = QSplitter(Qt.Orientation.Horizontal, self)
        right.addWidget(plots_box)
        right.addWidget(box)
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)
        right.setSizes([340, 660])
        form_scroll = QScrollArea(self)
        form_scroll.setWidgetResizable(True)
        form_scroll.setWidget(self.form_box)
        form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        form_scroll.setMinimumWidth(340)
        split = QSplitter(self)
        split.addWidget(form_scroll)
        split.addWidget(right)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([380, 1000])
        self.splitter = split
        self.compact = False
        self._controls_on = True  # False while presenting: the curves and the replay alone
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(split)

    def set_controls_visible(self, on: bool) -> None:
        """Presentation mode: the curves and the replay alone (the settings form hides), its controls enlarged."""
        self._controls_on = on
        self._arrange()
        present_replay_controls(self.timeline, self.timeline.view.style, not on, (self.progress, self.status))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        """The form beside the curves, or (a compact window: :func:`is_compact` of the window's height)
        folded behind :attr:`form_toggle` until asked for; hidden while presenting."""
        if not self.built:
            return
        compact = is_compact(self.window().height())
        if compact != self.compact:
            self.compact = compact
            self.form_toggle.blockSignals(True)
            self.form_toggle.setChecked(False)  # each time the window becomes compact: the replay first
            self.form_toggle.blockSignals(False)
        shown = self._controls_on and (not compact or self.form_toggle.isChecked())
        self.form_toggle.setVisible(self._controls_on and compact)
        self.form_toggle.setArrowType(Qt.ArrowType.RightArrow if shown else Qt.ArrowType.LeftArrow)
        self.form_toggle.setText("Hide the settings" if shown else "Train a model…")
        self.splitter.widget(0).setVisible(shown)
        self._place_run_line(shown)

    def set_style(self, style) -> None:
        self.timeline.set_style(style)
        present_replay_controls(self.timeline, style, not self._controls_on, (self.progress, self.status))
        width = max(2.0, style.line_width)
        self.loss_curve.setPen(pg.mkPen("#CC6677", width=width))
        self.acc_curve.setPen(pg.mkPen("#117733", width=width))
        self.plots.setBackground(style.background)
        for plot in (self.loss_plot, self.acc_plot):  # axes and titles in the figure colour, sized like the views
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(pg.mkPen(style.foreground))
                axis.setTextPen(pg.mkPen(style.foreground))
                axis.setStyle(tickFont=style.font())
                if axis.labelText:  # "step" at the ticks' size (pyqtgraph's own ~9 pt read 9 px when presenting)
                    axis.setLabel(axis.labelText, **{"font-size": f"{style.font_pt():.1f}pt",
                                                     "color": style.foreground})
        for item, text in ((self.loss_title, LOSS_TITLE), (self.acc_title, ACC_TITLE)):
            set_title(item, text, style)

    def _error(self, message: str) -> None:
        self.notice.emit(message, "error")

    # -- running -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.worker is not None and self.worker.isRunning()

    def start(self) -> None:
        """Start training the chosen task with the chosen settings."""
        if self.running:
            return
        task = self.task_box.currentText()
        self.out_dir = Path(self.out_edit.text()).expanduser() if self.out_edit.text().strip() else default_run_dir(task)
        kwargs = {"task": task, "steps": self.steps_box.value(), "lr": self.lr_box.value(),
                  "batch_size": self.batch_box.value(), "device": self.device_box.currentText(),
                  "seed": self.seed_box.value(), "out_dir": str(self.out_dir),
                  "checkpoint_every": max(1, self.steps_box.value() // CHECKPOINTS)}
        self.steps, self.loss, self.acc = [], [], []
        self._last = None
        self._loss_top = 0.0
        self.loss_plot.setXRange(0, kwargs["steps"], padding=0.02)
        self.loss_curve.setData([], [])
        self.acc_curve.setData([], [])
        self.progress.setRange(0, kwargs["steps"])
        self.progress.setValue(0)
        self.status.setText(f"starting… (saving to {self.out_dir})")
        if self.timeline.snapshots is not None:
            self.timeline.set_snapshots(None)
        self.worker = TrainingWorker(kwargs, parent=self)
        self.worker.progress.connect(self._on_progress)
        self.worker.failed.connect(self._on_failed)
        self.worker.completed.connect(self._on_completed)
        self.worker.finished.connect(self._on_thread_finished)
        self._set_running(True)
        self.worker.start()

    def cancel(self) -> None:
        if self.running:
            self.worker.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText("cancelling after the current step…")

    def _set_running(self, on: bool) -> None:
        self._run_on = on
        self._arrange()  # folded: the run line shows (or keeps) the run's progress and status
        self.start_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        for w in (self.task_box, self.steps_box, self.lr_box, self.batch_box, self.device_box, self.seed_box,
                  self.out_edit):
            w.setEnabled(not on)
        if on:
            self.open_button.setEnabled(False)

    def _on_progress(self, events: list) -> None:
        snaps = next((ev.snapshots for ev in reversed(events) if getattr(ev, "snapshots", None) is not None), None)
        if snaps is not None:  # the replay follows the run: the newest snapshot is shown as it arrives
            self.timeline.set_snapshots(snaps, causal=bool(self._defaults.get("causal")), follow=True)
        for ev in events:
            if ev.step and (not self.steps or ev.step > self.steps[-1]):
                self.steps.append(ev.step)
                self.loss.append(ev.loss)
                self.acc.append(ev.accuracy if not math.isnan(ev.accuracy) else 0.0)
        self._last = events[-1]
        if events[-1].done:
            self._redraw()
        elif not self._redraw_timer.isActive():
            self._redraw_timer.start()  # curves and text at most REDRAW_MS apart: drawing costs GUI time

    def _redraw(self) -> None:
        last = self._last
        if last is None:
            return
        self.progress.setValue(last.step)
        text = (f"step {last.step}/{last.total} · loss {last.loss:.4f} · accuracy {100 * last.accuracy:.1f}% · "
                f"{last.items_per_s:.0f} examples/s · {last.elapsed:.1f} s")
        self.status.setText(last.message or text)
        self.loss_curve.setData(self.steps, self.loss)
        self.acc_curve.setData(self.steps, self.acc)
        finite = [v for v in self.loss[-50:] if math.isfinite(v)]
        top = max(finite, default=0.0)
        if top > self._loss_top:
            # ranges are fixed and grow only when needed: re-ticking the axes on every update would
            # cost the GUI thread more than drawing the curves
            self._loss_top = top * 1.1
            self.loss_plot.setYRange(0, self._loss_top, padding=0)

    def _on_failed(self, message: str) -> None:
        self.status.setText(message)
        self.notice.emit(message, "error")

    def _on_completed(self, final) -> None:
        if final is not None:
            info = final.result.info if final.result is not None else {}
            metrics = info.get("metrics")
            if metrics and info.get("complete"):  # the loop's line names metrics by key: say them in words
                self.status.setText(f"done in {final.elapsed:.1f} s · held-out: {format_metrics(metrics)}")
            else:
                self.status.setText(final.message)
            cancelled = bool(final.result is not None and final.result.info.get("cancelled"))
            # a run cancelled after a checkpoint keeps it (and its snapshots): that model can be opened
            saved = self.out_dir is not None and all(
                (Path(self.out_dir) / name).is_file() for name in ("config.json", "model.safetensors"))
            self.open_button.setEnabled(saved if cancelled else self.out_dir is not None)
            # a cancelled run keeps the replay it showed live: the folder holds only the snapshots up to its
            # last checkpoint (a run cancelled at step 206 went back from 'step 189 (4/4)' to 'step 63 (2/2)')
            live = cancelled and self.timeline.snapshots is not None
            if (saved if cancelled else self.out_dir is not None) and not live:
                run_job(load_snapshots_job, str(self.out_dir), on_result=self._got_snapshots, on_error=self._error)
        self.finished.emit(final)

    def _got_snapshots(self, snaps) -> None:
        self.timeline.set_snapshots(snaps, causal=bool(self._defaults.get("causal")))

    def _on_thread_finished(self) -> None:
        self._set_running(False)

    def show_model_snapshots(self, snaps, causal: bool) -> None:
        """Replay the snapshots stored with a loaded model (when no training run is on screen)."""
        for _ in self.model_snapshot_steps(snaps, causal):
            pass

    def model_snapshot_steps(self, snaps, causal: bool):
        """:meth:`show_model_snapshots` in two steps (a generator): the replay, then the recorded curves.
        With the tab in front each repaints its own plots, and both in one event-loop turn (pyqtgraph
        paints a re-ranged plot twice) froze the window for 60-75 ms per model switch."""
        if self.running or self.steps:
            return
        self.timeline.set_snapshots(snaps, causal)
        yield
        if not self.running and not self.steps:
            self._show_loaded_history()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._show_loaded_history()

    def _show_loaded_history(self) -> None:
        """The curves of the model the window has loaded (its ``loaded``; none for a model without a
        recorded history), until a run of this tab starts."""
        loaded = getattr(self.window(), "loaded", None)
        if loaded is not None:
            self.show_loaded(loaded)

    def show_loaded(self, loaded) -> None:
        """The loaded model's recorded curves, and its own task in the form (an induction model offers
        "induction", not the first task of the list), until a run of this tab starts."""
        task = getattr(loaded, "task", None)
        if not self.running and not self.steps and task and self.task_box.findText(str(task)) >= 0:
            self.task_box.setCurrentText(str(task))
        info = getattr(loaded, "info", None) or {}
        history = info.get("history") if isinstance(info.get("history"), dict) else None
        self.show_model_history(history, str(getattr(loaded, "name", "") or ""))

    def show_model_history(self, history: dict | None, name: str = "") -> None:
        """Draw the training curves recorded with a loaded model (``config.json`` "history": step,
        loss, accuracy), while no run of this tab is on screen; None clears them."""
        if self.running or self.steps:
            return
        steps = list((history or {}).get("step", []))
        loss = [float(v) for v in (history or {}).get("loss", [])][:len(steps)]
        acc = [0.0 if not math.isfinite(float(v)) else float(v) for v in (history or {}).get("accuracy", [])]
        acc = acc[:len(steps)]
        self.loss_curve.setData(steps[:len(loss)], loss)
        self.acc_curve.setData(steps[:len(acc)], acc)
        finite = [v for v in loss if math.isfinite(v)]
        if steps and finite:
            self.loss_plot.setXRange(0, steps[-1], padding=0.02)
            self.loss_plot.setYRange(0, max(finite) * 1.1, padding=0)
            self.status.setText(f"curves recorded when {name or 'the loaded model'} was trained "
                                f"({steps[-1]} steps); start a run to train a new model")
        else:  # another model's caption must not stay under empty curves
            self.status.setText(f"no training curves were recorded with {name}" if name else "")

    def shutdown(self, msecs: int = 10000) -> None:
        """Cancel a running training and wait for its thread (window closing)."""
        if self.worker is not None and self.worker.isRunning():
            self.worker.cancel()
            self.worker.wait(msecs)
