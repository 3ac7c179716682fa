"""Lesson mode: a lesson's scenes full-screen, figure first, one at a time — and every scene stays live.

PageDown / PageUp (or Space / Backspace) step through the scenes; Esc returns to the full app. Each scene
is the real figure on the real model: type another sentence (Enter runs it), click a token, switch heads
with Alt+arrows. The caption's numbers are measured on a worker thread when the scene appears, with its
own copy of the models (a torch module is not re-entrant), and filled in when they arrive.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from attnviz.errors import AttnvizError

__all__ = ["LessonWindow"]


def _measure(scene, n: int):
    """Worker: a fresh Workbench (own model copies) measures the scene's claim."""
    from attnviz.lessons.claims import Workbench, evaluate_claim

    return scene, evaluate_claim(scene, Workbench(), n=n)


class LessonWindow(QWidget):
    """Shows ``lesson`` one scene at a time. ``closed`` is emitted when Esc leaves lesson mode."""

    closed = Signal()
    scene_shown = Signal(int)
    caption_measured = Signal(int, str)

    def __init__(self, lesson, style=None, parent=None, measure_n: int = 100):
        super().__init__(parent)
        from attnviz.lessons.claims import Workbench

        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setWindowTitle(f"attnviz lesson — {lesson.title}")
        self.lesson, self.style_, self.measure_n = lesson, style, measure_n
        self.bench = Workbench()
        self.index = -1
        self.scene = None
        self.view = self.selection = self.trace = None
        self._jobs = []
        self.title = QLabel()
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 2.0)
        font.setBold(True)
        self.title.setFont(font)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        cfont = QFont(self.font())
        cfont.setPointSizeF(cfont.pointSizeF() * 1.4)
        self.caption.setFont(cfont)
        self.input = QLineEdit()
        self.input.setPlaceholderText("type a sentence and press Enter")
        self.input.returnPressed.connect(self._typed)
        self.footer = QLabel()
        self.footer.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body = QVBoxLayout()
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addLayout(self.body, 1)
        lay.addWidget(self.caption)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        lay.addLayout(row)
        lay.addWidget(self.footer)
        for keys, slot in (((Qt.Key.Key_PageDown, Qt.Key.Key_Space), self.next_scene),
                           ((Qt.Key.Key_PageUp, Qt.Key.Key_Backspace), self.previous_scene),
                           ((Qt.Key.Key_Escape,), self.close)):
            for key in keys:
                sc = QShortcut(QKeySequence(key), self)
                sc.setContext(Qt.ShortcutContext.WindowShortcut)
                sc.activated.connect(slot)
        for text, field, delta in (("Alt+Right", "head", 1), ("Alt+Left", "head", -1),
                                   ("Alt+Down", "layer", 1), ("Alt+Up", "layer", -1)):
            sc = QShortcut(QKeySequence(text), self)
            sc.activated.connect(lambda f=field, d=delta: self.step_selection(f, d))

    # -- navigation ------------------------------------------------------------------------------
    def next_scene(self) -> None:
        if self.index + 1 < len(self.lesson.scenes):
            self.show_scene(self.index + 1)

    def previous_scene(self) -> None:
        if self.index > 0:
            self.show_scene(self.index - 1)

    def show_scene(self, i: int) -> None:
        """Show scene ``i`` (0-based): its figure, title and caption; start measuring its claim."""
        self.index = i
        self.scene = self.lesson.scenes[i]
        self.title.setText(self.scene.title)
        self.input.setVisible(self.scene.text is not None)
        self.input.setText(self.scene.text or "")
        self.footer.setText(f"scene {i + 1} of {len(self.lesson.scenes)} · PageDown next · PageUp previous · "
                            "type and press Enter · click tokens · Alt+arrows: layer/head · Esc: back to the app")
        self._build(self.scene)
        self.caption.setText(self.scene.caption.split("{")[0].rstrip(" :;,(") + " … (measuring)"
                             if "{" in self.scene.caption else self.scene.caption)
        if self.scene.claim:
            from attnviz.gui.workers import run_job

            self._jobs.append(run_job(_measure, self.scene, self.measure_n, on_result=self._measured,
                                      on_error=lambda msg: self.caption.setText(f"cannot measure the claim: {msg}")))
        self.scene_shown.emit(i)

    def _measured(self, res) -> None:
        from attnviz.lessons.claims import format_caption

        scene, result = res
        if scene is not self.lesson.scenes[self.index]:
            return  # the lecturer has moved on
        text = format_caption(scene.caption, result) if scene.caption else result.line
        self.caption.setText(text)
        self.caption_measured.emit(self.index, text)

    # -- the live figure ---------------------------------------------------------------------------
    def _build(self, scene) -> None:
        from attnviz.gui.scene_figure import build_scene_figure

        self._drop_view()
        try:
            view, selection, _caption, _ = build_scene_figure(scene, self.bench, self.style_, measure=False)
        except AttnvizError as exc:
            self.caption.setText(str(exc))
            return
        self.view, self.selection = view, selection
        self.trace = getattr(view, "trace", None)
        self.body.addWidget(view, 1)
        view.show()
        selection.connect(self._selection_changed)

    def _drop_view(self) -> None:
        if self.view is not None:
            self.selection.disconnect(self._selection_changed)
            self.body.removeWidget(self.view)
            self.view.close()
            self.view.deleteLater()
            self.view = self.selection = None

    def _selection_changed(self, state, changed) -> None:
        # comparison figures are computed from the model for one head: recompute them for the new one
        if getattr(self.view, "needs_model", False) and changed & {"layer", "head"}:
            self._recompute_panels(state)

    def _recompute_panels(self, state) -> None:
        from attnviz.gui.figures import figure_spec
        from attnviz.gui.views.lesson_views import figure_panels

        try:
            self.view.set_panels(figure_panels(figure_spec(self.scene.view).name, self.bench, self._live_scene(),
                                               self.view.trace, state))
        except AttnvizError as exc:
            self.caption.setText(str(exc))

    def _live_scene(self):
        return replace(self.scene, text=self.input.text()) if self.scene.text is not None else self.scene

    def _typed(self) -> None:
        """Run the typed sentence through the scene's model and show it in the same figure."""
        if self.view is None or not self.input.text().strip():
            return
        from attnviz.gui.figures import figure_spec
        from attnviz.lessons.claims import scene_selection

        scene = self._live_scene()
        try:
            trace = self.bench.trace(scene, grad=figure_spec(scene.view).needs_grad)
            state = scene_selection(replace(scene, query=None), trace)
        except AttnvizError as exc:
            self.caption.setText(str(exc))
            return
        self.trace = trace
        self.view.set_trace(trace)
        self.selection.update(query=state.query)
        if getattr(self.view, "needs_model", False):
            self._recompute_panels(self.selection.state)

    def step_selection(self, field: str, delta: int) -> None:
        if self.selection is None or self.trace is None:
            return
        state = self.selection.state
        n = self.trace.n_heads if field == "head" else self.trace.layers_in(state.part)
        self.selection.update(**{field: (getattr(state, field) + delta) % n})

    def closeEvent(self, event) -> None:
        self._drop_view()
        super().closeEvent(event)
        self.closed.emit()
