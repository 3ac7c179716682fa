"""The Training tab's settings form: task, steps, learning rate, batch size, device, seed, output folder,
the start/cancel/open buttons, progress and status (a mixin of
:class:`attnviz.gui.panels.training_panel.TrainingPanel`, which runs and draws the training)."""

from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QProgressBar, QPushButton, QSizePolicy, QSpinBox, QToolButton, QVBoxLayout,
                               QWidget)

from attnviz.gui.widgets.fitted_label import FittedLabel
from attnviz.gui.workers import run_job

__all__ = ["TrainingFormMixin", "task_defaults"]


def task_defaults(name: str) -> dict:
    """Default steps, learning rate, batch size and description of a task (runs in a worker)."""
    from attnviz.tasks import get_task

    task = get_task(name)
    return {"name": name, "steps": int(task.steps), "lr": float(task.lr), "batch_size": int(task.batch_size),
            "description": str(task.description or ""), "causal": task.kind == "decoder"}


class TrainingFormMixin:
    """Builds the settings form (``form_box`` and its controls) and fills in a task's defaults."""

    def _build_form(self, task_names: list[str]) -> None:
        self.form_box = QGroupBox("Train a model", self)
        self.task_box = QComboBox(self)
        self.task_box.addItems(task_names)
        self.task_box.setToolTip("A built-in task: the data is generated, nothing is downloaded")
        self.description = QLabel("", self)
        self.description.setWordWrap(True)
        self.steps_box = QSpinBox(self)
        self.steps_box.setRange(1, 1_000_000)
        self.steps_box.setSingleStep(100)
        self.lr_box = QDoubleSpinBox(self)
        self.lr_box.setDecimals(5)
        self.lr_box.setRange(1e-5, 1.0)
        self.lr_box.setSingleStep(1e-4)
        self.batch_box = QSpinBox(self)
        self.batch_box.setRange(1, 4096)
        self.device_box = QComboBox(self)
        self.device_box.addItem("auto")
        self.seed_box = QSpinBox(self)
        self.seed_box.setRange(0, 2**31 - 1)
        self.out_edit = QLineEdit(self)
        self.out_edit.setPlaceholderText("a new folder under the app's data folder")
        self.out_edit.setToolTip("Where the checkpoint and the attention snapshots are written")
        browse = QToolButton(self)
        browse.setText("…")
        browse.setToolTip("Choose the output folder")
        browse.clicked.connect(self._browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out_edit, 1)
        out_row.addWidget(browse)
        self.start_button = QPushButton("Start training", self)
        self.start_button.setToolTip("Train in the background; the app stays usable")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop after the current step; a run stopped before its first checkpoint "
                                      "leaves no folder behind")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.open_button = QPushButton("Open trained model", self)
        self.open_button.setToolTip("Load the trained model into the Attention views")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(lambda: self.out_dir and self.open_model.emit(str(self.out_dir)))
        self.progress = QProgressBar(self)
        self.progress.setFormat("%v / %m steps")
        # two lines, always (a label that grows would re-lay out the plots on every update), its text
        # shortened in the middle when longer: a run's folder path took a third line, cut off
        self.status = FittedLabel(2, self)
        form = QFormLayout()
        form.addRow("Task:", self.task_box)
        form.addRow("", self.description)
        form.addRow("Steps:", self.steps_box)
        form.addRow("Learning rate:", self.lr_box)
        form.addRow("Batch size:", self.batch_box)
        form.addRow("Device:", self.device_box)
        form.addRow("Seed:", self.seed_box)
        form.addRow("Save to:", out_row)
        # a widget, not a bare layout: folded, the row moves to the run line with the progress and status
        self.buttons_row = QWidget(self.form_box)
        # its line's height only: a plain widget shared the form's spare height and floated above the progress bar
        self.buttons_row.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        buttons = QHBoxLayout(self.buttons_row)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.open_button)
        lay = QVBoxLayout(self.form_box)
        lay.addLayout(form)
        lay.addWidget(self.buttons_row)
        lay.addWidget(self.progress)
        lay.addWidget(self.status)
        self._form_lay = lay
        self._run_on = False  # between start and the worker's end (set by _set_running)

    def _build_run_line(self, parent) -> None:
        """Where the progress bar and status line go while the form is folded away: a run's progress and
        status were hidden with the form at 1280×720 (issue 36). Empty and hidden until then."""
        self.run_line = QWidget(parent)
        lay = QVBoxLayout(self.run_line)
        lay.setContentsMargins(0, 0, 0, 0)
        self.run_line.hide()

    def _place_run_line(self, form_shown: bool) -> None:
        """The Cancel and Open buttons, progress and status at the form's foot while it is shown, else on the run
        line above the curves while a run is under way or after one (its outcome), the same widgets: one place
        updates them. Folded, Cancel and "Open trained model" had no way onto the screen but unfolding the form
        (issue 36); Start stays with the settings it starts, one click away on the form's button."""
        home, into = (self.form_box, self._form_lay) if form_shown else (self.run_line, self.run_line.layout())
        for w in (self.buttons_row, self.progress, self.status):
            if w.parentWidget() is not home:
                w.parentWidget().layout().removeWidget(w)
                into.addWidget(w)
        self.start_button.setVisible(form_shown)
        self.buttons_row.setVisible(self._controls_on)  # presenting: the run's progress alone, no controls
        self.run_line.setVisible(not form_shown and (self._run_on or (self._controls_on and self.out_dir is not None)))


    def set_devices(self, devices: list[str]) -> None:
        self.device_box.clear()
        self.device_box.addItems(["auto", *devices])

    def _task_changed(self, name: str) -> None:
        if name:
            run_job(task_defaults, name, on_result=self._got_defaults, on_error=self._error)

    def _got_defaults(self, d: dict) -> None:
        if d["name"] != self.task_box.currentText():
            return
        self._defaults = d
        self.steps_box.setValue(d["steps"])
        self.lr_box.setValue(d["lr"])
        self.batch_box.setValue(d["batch_size"])
        self.description.setText(d["description"])

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Save the trained model in")
        if path:
            self.out_edit.setText(path)
