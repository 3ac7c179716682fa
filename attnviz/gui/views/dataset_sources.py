"""Where the "Heads over a data set" view takes its inputs: the task's held-out data, a text file (one
input per line), a folder of images, or only the input on screen; which of them a model has, how the view
names them, and the dialogs that pick them.

Only sources that exist are offered: a Hugging Face folder names no built-in task, so "held-out inputs of the
task" would only fail with a paragraph of error text; a text model cannot read a folder of images."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SOURCE_LABELS", "has_task", "model_name", "offered_sources", "missing_words", "source_words",
           "ask_for_source"]

# kind → the data box's entry ("task": the task's held-out inputs; "screen": no data set, the input on screen)
SOURCE_LABELS = {"task": "held-out inputs of the task", "screen": "the input on screen only",
                 "corpus": "a text file (one input per line)…", "images": "a folder of images…"}


def has_task(trace) -> bool:
    """Whether the model ``trace`` came from names a built-in task whose generator gives held-out inputs."""
    from attnviz.tasks import TASKS  # the table of names only: no task module is imported

    return trace is not None and (trace.description.task or "") in TASKS


def model_name(trace) -> str:
    """The model's name as the data-set views say it: a folder's name, not its whole path."""
    return Path(trace.description.model_name or "this model").name


def offered_sources(trace, runnable: bool = True) -> list[str]:
    """The kinds of input the data box offers for ``trace``'s model, in order: the task's held-out inputs
    when it has a task (else the input on screen), then a text file or, for a vision model, a folder of images.
    A trace with no model to run (``runnable`` False, e.g. read from a file) has the input on screen only."""
    if trace is None or not runnable:
        return ["screen"]
    return ["task" if has_task(trace) else "screen", "images" if trace.description.kind == "vit" else "corpus"]


def missing_words(trace, runnable: bool = True) -> str:
    """One line saying which data set is missing and what gives one ("" when the task's held-out inputs exist)."""
    if trace is None:
        return "no model: open a model to score its heads"
    if not runnable:
        return "no model to run a data set with (a trace read from a file)"
    if has_task(trace):
        return ""
    name = model_name(trace)
    other = "a folder of images" if trace.description.kind == "vit" else "a text file"
    return f"no held-out inputs: {name} has no built-in task; choose {other} under “data:”"


def source_words(source: tuple[str, str] | None, n: int) -> str:
    """ "200 held-out inputs", "up to 200 lines of poems.txt", "up to 200 images in photos"."""
    if source is None:
        return f"{n} held-out inputs"
    kind, path = source
    return f"up to {n} {'lines of' if kind == 'corpus' else 'images in'} {Path(path).name}"


def ask_for_source(parent, kind: str) -> tuple[str | None, str | None] | None:
    """The source of kind ``kind`` (a key of :data:`SOURCE_LABELS`) as (kind, path), (None, None) for the model's
    own default (its task's inputs or the input on screen); a file or folder dialog asks for the path. None when
    the dialog was cancelled."""
    from PySide6.QtWidgets import QFileDialog

    if kind not in ("corpus", "images"):
        return None, None
    if kind == "corpus":
        path, _ = QFileDialog.getOpenFileName(parent, "Text file: one input per line", "",
                                              "Text (*.txt *.csv *.tsv);;All files (*)")
    else:
        path = QFileDialog.getExistingDirectory(parent, "Folder of images")
    return (kind, path) if path else None
