"""Lesson mode: a lesson's scenes one at a time, in presentation mode — and every scene stays live.

:func:`start_lesson` puts a :class:`LessonStage` (title, the scene's figure, its caption, a line to type
into) in the main window as a page of its own and presents it with
:mod:`attnviz.gui.panels.presentation`: the same figure-first, full-screen, large-type mode as F5, so
side panels, menus and tab bars hide the same way and Esc returns to the app as it was. Page Down /
Page Up (a clicker's keys) step through the scenes; Alt+arrows switch layer and head of the scene's
figure; type a sentence and press Enter to run it through the scene's model; click tokens.

Nothing runs a model on the GUI thread: each scene's trace (and a typed sentence's) is computed on the
stage's figure lane, the caption's numbers on its measuring lane; each lane has one worker thread and
one set of model copies kept for the whole lesson (a torch module is not re-entrant, and reloading
models per scene is slow). The figure appears, and the caption's numbers are filled in, when they
arrive.
"""

from __future__ import annotations

from dataclasses import replace

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from attnviz.errors import AttnvizError
from attnviz.figures.scenes import CAPTION_N
from attnviz.gui.panels.presentation_hint import HINT_COLOURS, SHOWN_MS
from attnviz.gui.widgets.formula_text import show_formula as _say
from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, HELD_FLOOR, ONE_PAGE
from attnviz.lessons.shown_note import TYPED_NOTE, moved_fields, shown_note, shown_title

__all__ = ["LessonStage", "start_lesson", "TYPED_NOTE", "INPUT_FREE_VIEWS"]

# figures drawn from shipped training runs or from timings of the model's shape: a typed sentence changes nothing in
# them, so their scenes offer no typing line (issue 36: scenes 8, 9 and 17 offered "Enter: run the sentence")
INPUT_FREE_VIEWS = ("scale-training", "path-length", "attention-cost")


def _compute(bench, scene):
    """Worker: the scene's trace (and compared panels) from the figure lane's own Workbench."""
    from attnviz.figures.scenes import compute_scene_figure

    return scene, compute_scene_figure(scene, bench)


def _retrace(bench, scene, view_name: str):
    """Worker: a typed sentence through the scene's model; its selection and, for compared figures, panels."""
    from attnviz.figures.registry import figure_spec
    from attnviz.lessons.claims import scene_selection
    from attnviz.lessons.figure_data import MODEL_FIGURES

    spec = figure_spec(view_name)
    trace = bench.trace(scene, grad=spec.needs_grad)
    state = scene_selection(replace(scene, query=None), trace)
    panels = None
    if spec.name in MODEL_FIGURES:
        from attnviz.gui.views.lesson_views import figure_panels

        panels = figure_panels(spec.name, bench, scene, trace, state)
    return trace, state, panels


def _panels(bench, name: str, scene, trace, state):
    """Worker: a compared figure's panels for another head."""
    from attnviz.gui.views.lesson_views import figure_panels

    return figure_panels(name, bench, scene, trace, state)


def _measure(bench, scene, n: int):
    """Worker: measure the scene's claim with the lane's own Workbench (models loaded once per lesson)."""
    from attnviz.lessons.claims import evaluate_claim

    return scene, evaluate_claim(scene, bench, n=n)


class LessonStage(QWidget):
    """Shows ``lesson`` one scene at a time. ``closed`` is emitted when the lesson ends (Esc)."""

    closed = Signal()
    scene_shown = Signal(int)  # the scene's figure is on screen
    figure_updated = Signal()  # a typed sentence or another head reached the figure
    caption_measured = Signal(int, str)

    def __init__(self, lesson, style=None, parent=None, measure_n: int = CAPTION_N):
        super().__init__(parent)
        from attnviz.gui.workers import Lane
        from attnviz.lessons.claims import Workbench

        self.lesson, self.style_, self.measure_n = lesson, style, measure_n
        self.bench = Workbench()  # the figures' models (used on the figure lane only)
        self._measure_bench = Workbench()  # the claims' models (the measuring lane only)
        self._figure_lane = Lane(self, threads=1)
        self._lane = Lane(self, threads=1)
        # the lesson is projected to a hall: 12 px type at every screen size, not the presenting floor in
        # proportion (8 px on a 1280×720 projector drew row labels nobody at the back could read, issue 36)
        self.setProperty(HELD_FLOOR, DOCKED_FLOOR_PT)
        self.setProperty(ONE_PAGE, True)  # a scene is a page: T×T maps keep the type floor to fit it (legible.py)
        self.index = -1
        self.scene = None
        self._shown_text = None
        self._caption_text = ""
        self._own = None  # the scene's own selection (what its caption was measured on), once its figure is shown
        self._selects: tuple[str, ...] = ()  # the selection fields the scene's figure draws
        self.view = self.selection = self.trace = None
        self.title = QLabel()
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setWordWrap(True)  # long titles and the footer must not widen the window past the screen
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.input = QLineEdit()
        self.input.setPlaceholderText("type a sentence and press Enter")
        self.input.returnPressed.connect(self._typed)
        self.footer = QLabel()
        self.footer.setObjectName("lesson_footer")
        self.footer.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.footer.setWordWrap(True)
        # the footer is the presentation hint's strip (show_hint): the keys' reminder returns after its seconds
        self._keys_text = ""
        self._hint_timer = QTimer(self)
        self._hint_timer.setSingleShot(True)
        self._hint_timer.timeout.connect(self._end_hint)
        self.body = QVBoxLayout()
        lay = QVBoxLayout(self)
        # every pixel of height to the figure: at 1280×720 the default margins and a line of its own for the
        # footer left "All queries at once" 591 px, its T×T maps 155 px and a scroll bar (9 px too few)
        lay.setContentsMargins(6, 2, 6, 2)
        lay.setSpacing(3)
        lay.addWidget(self.title)
        lay.addLayout(self.body, 1)
        lay.addWidget(self.caption)
        bottom = QHBoxLayout()  # the typing line and the keys' reminder share a line
        bottom.setSpacing(12)
        bottom.addWidget(self.input, 1)
        bottom.addWidget(self.footer, 2)
        lay.addLayout(bottom)

    # -- navigation (presentation mode's Page Down / Page Up call step_by) ---------------------------
    def step_by(self, delta: int) -> None:
        """The next (``delta`` > 0) or previous scene; nothing past either end."""
        i = self.index + (1 if delta > 0 else -1)
        if 0 <= i < len(self.lesson.scenes):
            self.show_scene(i)

    def next_scene(self) -> None:
        self.step_by(1)

    def previous_scene(self) -> None:
        self.step_by(-1)

    def show_scene(self, i: int) -> None:
        """Show scene ``i`` (0-based): title and caption now, its figure when its model has run
        (``scene_shown``); start measuring its claim."""
        self.index = i
        self.scene = self.lesson.scenes[i]
        self._fonts()
        _say(self.title, self.scene.title)
        typing = self._typing()
        self.input.setVisible(typing)
        self.input.setText(self.scene.text or "")
        self.input.setCursorPosition(0)  # a sentence longer than the line shows its start, not its last words
        # one line beside the typing line at 1280×720 (two lines took the figure's height); each key offered only
        # where it changes the figure
        self._keys_text = (f"scene {i + 1} of {len(self.lesson.scenes)} · Page Down / Up · "
                           + ("Enter: run the sentence · " if typing else "")
                           + ("Alt+arrows: layer / head · " if self._moves_heads() else "")
                           + "Esc or F5: back to the app")  # (F5 leaves the lesson too: a40)
        if not self._hint_timer.isActive():  # a hint on screen keeps the strip for its seconds
            self.footer.setText(self._keys_text)
        self._drop_view()
        self._own = None
        self._shown_text = self.scene.text  # the sentence the figure shows
        self._set_caption(self.scene.caption.split("{")[0].rstrip(" :;,(") + " … (measuring)"
                          if "{" in self.scene.caption else self.scene.caption)
        self._figure_lane.submit("figure", _compute, self.bench, self.scene, on_result=self._computed,
                                 on_error=self._failed, supersedes=("retrace", "panels"))
        if self.scene.claim:
            self._lane.submit("measure", _measure, self._measure_bench, self.scene, self.measure_n,
                              on_result=self._measured, on_error=self._measure_failed)

    # -- the presentation hint, in the footer's strip ----------------------------------------------------
    def show_hint(self, text: str, ms: int = SHOWN_MS) -> None:
        """Presentation mode's hint ("Esc: back to the app", "This is the last scene") in the footer line, in the
        hint's colours, for ``ms``: laid over the stage it covered a long title or the figure that arrived after
        it was placed (issue 36); the footer is drawn nowhere else."""
        self.footer.setText(text)
        self.footer.setStyleSheet(f"QLabel#lesson_footer {{ {HINT_COLOURS} border-radius: 6px; padding: 0 10px; }}")
        self._hint_timer.start(ms)

    def hint_shown(self) -> str:
        """The hint on screen now, or "" (the footer shows the keys' reminder)."""
        return self.footer.text() if self._hint_timer.isActive() else ""

    def _end_hint(self) -> None:
        self.footer.setStyleSheet("")
        self.footer.setText(self._keys_text)

    def _fonts(self) -> None:
        """Title and caption a size above the (presentation) body text."""
        base = QApplication.font()
        # a size above the body text, not more: on a 1280×720 projector the figure needs the height
        for label, factor, bold in ((self.title, 1.6, True), (self.caption, 1.25, False)):
            font = QFont(base)
            font.setPointSizeF(base.pointSizeF() * factor)
            font.setBold(bold)
            label.setFont(font)

    def _measured(self, res) -> None:
        from attnviz.lessons.claims import format_caption

        scene, result = res
        if scene is not self.lesson.scenes[self.index]:
            return  # the lecturer has moved on
        try:
            text = format_caption(scene.caption, result) if scene.caption else result.line
        except AttnvizError as exc:
            text = str(exc)
        self._set_caption(text)
        self.caption_measured.emit(self.index, text)

    def _typing(self) -> bool:
        """Whether the scene offers a line to type into: it has a sentence and its figure reads it."""
        from attnviz.figures.registry import figure_spec

        return self.scene.text is not None and figure_spec(self.scene.view).name not in INPUT_FREE_VIEWS

    def _moves_heads(self) -> bool:
        """Whether Alt+arrows change the scene's figure (it draws a layer or a head)."""
        from attnviz.figures.registry import figure_spec

        return bool({"layer", "head"} & set(figure_spec(self.scene.view).selects))

    def _set_caption(self, text: str) -> None:
        """The scene's caption, with what the figure shows said when it is not what the caption was measured on
        (:func:`_qualify`)."""
        self._caption_text = text
        self._qualify()

    def _qualify(self) -> None:
        """Caption and title, said to be about the scene's own sentence / head / query while the figure shows a
        typed sentence ("all 12×12 weights" stood under an 18 × 18 figure) or another head (Alt+arrows: "largest
        0.39 on 'it'" under a head whose top weight was 0.130, issue 36)."""
        if self.scene is None:
            return
        shown, own = (self._shown_text or "").strip(), (self.scene.text or "").strip()
        typed = shown != own
        state = self.selection.state if self.selection is not None else None
        moved = moved_fields(self._own, state, self._selects, typed)
        note = shown_note(typed, moved, self._own, self._selects)
        text = self._caption_text
        _say(self.caption, f"{text} {note}" if text and note else text)
        _say(self.title, shown_title(self.scene.title, typed, moved))

    def _measure_failed(self, message: str) -> None:
        _say(self.caption, f"cannot measure the claim: {message}")

    # -- the live figure ---------------------------------------------------------------------------
    def _computed(self, res) -> None:
        from attnviz.figures.scenes import make_scene_view

        scene, (spec, trace, state, panels) = res
        if scene is not self.scene:
            return  # the lecturer has moved on
        self._drop_view()
        try:
            view, selection = make_scene_view(spec, trace, state, panels, self._style(), scene.step)
        except AttnvizError as exc:
            self._failed(str(exc))
            return
        from attnviz.gui.views.lesson_page import on_page

        self.view, self.selection, self.trace = on_page(view), selection, trace
        # what the caption was measured on; a figure of every head of a layer (per_head False) keeps its claim
        # whichever head is outlined
        self._own = selection.state
        self._selects = tuple(f for f in spec.selects if f != "head" or spec.per_head)
        _figure_only(view)
        self.body.addWidget(view, 1)
        view.show()
        selection.connect(self._selection_changed)
        self.scene_shown.emit(self.index)

    def _failed(self, message: str) -> None:
        _say(self.caption, message)

    def _style(self):
        """The window's view style (large type while presenting), else the one given."""
        win = self.parent()
        while win is not None and not hasattr(win, "view_style"):
            win = win.parent()
        return getattr(win, "view_style", None) or self.style_

    def _drop_view(self) -> None:
        if self.view is not None:
            self.selection.disconnect(self._selection_changed)
            self.body.removeWidget(self.view)
            self.view.close()
            self.view.deleteLater()
            self.view = self.selection = None

    def _selection_changed(self, state, changed) -> None:
        self._qualify()
        # comparison figures are computed from the model for one head: recompute them for the new one
        if getattr(self.view, "needs_model", False) and changed & {"layer", "head"}:
            self._recompute_panels(state)

    def _recompute_panels(self, state) -> None:
        from attnviz.figures.registry import figure_spec

        view = self.view
        self._figure_lane.submit("panels", _panels, self.bench, figure_spec(self.scene.view).name, self._live_scene(),
                                 self.trace, state, on_result=lambda panels: self._panels_ready(view, panels),
                                 on_error=self._failed, owner=self)

    def _panels_ready(self, view, panels) -> None:
        if view is self.view and view is not None:
            view.set_panels(panels)
            self.figure_updated.emit()

    def _live_scene(self):
        return replace(self.scene, text=self.input.text()) if self.scene.text is not None else self.scene

    def _typed(self) -> None:
        """Run the typed sentence through the scene's model (on the figure lane); the same figure shows it."""
        if self.view is None or not self.input.text().strip():
            return
        view, scene = self.view, self._live_scene()
        self._figure_lane.submit("retrace", _retrace, self.bench, scene, self.scene.view,
                                 on_result=lambda res: self._retraced(view, res, scene.text), on_error=self._failed,
                                 supersedes=("panels",), owner=self)

    def _retraced(self, view, res, text: str | None = None) -> None:
        if view is not self.view or view is None:
            return
        trace, state, panels = res
        self.trace = trace
        self._shown_text = text
        self._set_caption(self._caption_text)
        view.set_trace(trace)
        self.selection.update(query=state.query)
        if panels is not None:
            view.set_panels(panels)
        self.figure_updated.emit()

    def step_selection(self, field: str, delta: int) -> None:
        """Alt+arrows while the lesson is presented: the figure's next/previous layer or head."""
        if self.selection is None or self.trace is None:
            return
        state = self.selection.state
        n = self.trace.n_heads if field == "head" else self.trace.layers_in(state.part)
        self.selection.update(**{field: (getattr(state, field) + delta) % n})

    def end(self) -> None:
        """Drop the figure and the work under way; emit ``closed``."""
        self._figure_lane.cancel()
        self._lane.cancel()
        self._drop_view()
        self.closed.emit()


def _figure_only(view) -> None:
    """Figure first, as presentation mode shows any figure: the view's controls hide (the figure
    itself still answers clicks; Alt+arrows and typing drive the rest)."""
    if hasattr(view, "set_controls_visible"):  # every view (BaseView) and walkthrough figure
        view.set_controls_visible(False)


def start_lesson(win, lesson, measure_n: int = CAPTION_N, first: int = 0) -> LessonStage:
    """Present ``lesson`` in ``win`` from scene ``first`` (0-based): a page of its own, shown by presentation
    mode; leaving presentation mode (Esc) removes the page and returns to the app as it was."""
    from attnviz.gui.panels.presentation import enter_presentation, presentation_mode

    stage = LessonStage(lesson, parent=win, measure_n=measure_n)
    previous = win.tabs.currentIndex()
    index = win.tabs.addTab(stage, lesson.title)
    win.tabs.setCurrentIndex(index)  # before presenting: presentation mode shows the current page's figure
    mode = presentation_mode(win)

    def finished(on: bool) -> None:
        if on:
            return
        mode.changed.disconnect(finished)
        if shiboken6.isValid(stage):
            i = win.tabs.indexOf(stage)
            if i >= 0:
                win.tabs.setCurrentIndex(previous)  # the page the lesson started from
                win.tabs.removeTab(i)
            stage.end()
            stage.deleteLater()

    first = min(max(int(first), 0), len(lesson.scenes) - 1)
    stage.index = first  # the hint on entering offers the keys that move from this scene (show_scene follows)
    enter_presentation(win, stage)
    mode.changed.connect(finished)
    stage.show_scene(first)
    return stage
