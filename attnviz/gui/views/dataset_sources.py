"""Where the "Heads over a data set" view takes its inputs: the task's held-out data, a text file (one
input per line) or a folder of images; how the view names them, and the dialogs that pick them."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SOURCES", "SOURCE_INDEX", "source_words", "ask_for_source"]

SOURCES = ("held-out inputs of the task", "a text file (one input per line)…", "a folder of images…")
SOURCE_INDEX = {None: 0, "corpus": 1, "images": 2}  # kind → entry of SOURCES


def source_words(source: tuple[str, str] | None, n: int) -> str:
    """ "200 held-out inputs", "up to 200 lines of poems.txt", "up to 200 images in photos"."""
    if source is None:
        return f"{n} held-out inputs"
    kind, path = source
    return f"up to {n} {'lines of' if kind == 'corpus' else 'images in'} {Path(path).name}"


def ask_for_source(parent, index: int) -> tuple[str | None, str | None] | None:
    """The source of entry ``index`` of :data:`SOURCES` as (kind, path); a file or folder dialog asks for
    the path. None when the dialog was cancelled."""
    from PySide6.QtWidgets import QFileDialog

    if index == 0:
        return None, None
    if index == 1:
        path, _ = QFileDialog.getOpenFileName(parent, "Text file: one input per line", "",
                                              "Text (*.txt *.csv *.tsv);;All files (*)")
    else:
        path = QFileDialog.getExistingDirectory(parent, "Folder of images")
    return ("corpus" if index == 1 else "images", path) if path else None
