"""Shared by the data-set views' tests: a view of ``cls`` on its own selection, shown at 1300 × 700; a tiny random
decoder of any layers × heads with no task, a data-set view of a given size showing its scores, and what its figure
holds when rendered for a file."""

from __future__ import annotations

from attnviz.selection import Selection


def make(qtbot, cls, trace):
    sel = Selection()
    view = cls(selection=sel)
    qtbot.addWidget(view)
    view.resize(1300, 700)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(trace)
    return view, sel


def task_free_trace(folder, layers: int, heads: int):
    """A trace of a tiny random decoder of ``layers`` × ``heads`` with no built-in task (scored on its own input)."""
    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model
    from attnviz.runtime import load_model, run_trace
    from attnviz.text.tokenizer import Tokenizer

    tok = Tokenizer.build("char", ["abc def"])
    cfg = ModelConfig(kind="decoder", vocab_size=len(tok.vocab), n_layers=layers, n_heads=heads, d_model=2 * heads,
                      max_len=16, head="lm")
    path = save_checkpoint(folder / f"m{layers}x{heads}", build_model(cfg), cfg, {}, tokenizer=tok)
    trace = run_trace(load_model(path), text="abc def")
    trace.meta["model_name"] = str(path)  # the view finds the model by its folder
    return trace


def scored_view(qtbot, trace, width: int, height: int):
    """A data-set view of ``width`` × ``height`` px showing ``trace``'s scores."""
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.views.dataset_view import DatasetView

    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    view.set_trace(trace)
    qtbot.waitUntil(lambda: view.result is not None, timeout=60000)
    for _ in range(20):
        QApplication.processEvents()
    return view


def render_seeing(view, probe) -> dict:
    """Render ``view``'s figure for a file (its figure_size) and return what ``probe(view)`` (a dict) saw while the
    figure was laid out for the file, just before it was drawn."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    seen = {}
    scene = view.canvas.scene()
    draw = scene.render

    def render(*args):
        seen.update(probe(view))
        draw(*args)

    scene.render = render
    try:
        size = view.figure_size()
        image = QImage(size.width(), size.height(), QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        view.render_figure(painter, QRectF(0, 0, size.width(), size.height()))
        painter.end()
    finally:
        del scene.render  # the scene's own method again
    return seen
