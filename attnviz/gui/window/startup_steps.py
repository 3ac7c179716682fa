"""The main window's start-up steps (a component of :class:`attnviz.gui.window.main_window.MainWindow`): steps 4-5
of the timeline in :mod:`attnviz.gui.startup`, which says what runs on which thread and why.

``start()`` (after the first paint) hands the views lane the job that delivers the import plans and the stored
opening trace; the GUI thread then runs ``_startup_steps``, one item per event-loop turn (an int item: wait that
many ms first), until the first map is drawn and the first model's load is let go.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QTimer

from attnviz.gui.gc_pause import gc_paused
from attnviz.gui.heavy_imports import import_modules_job
from attnviz.gui.startup.import_plans import VIEW_DEPENDENCIES, pyqtgraph_plan, views_plan
from attnviz.gui.startup.stepped_import import SteppedImport
from attnviz.gui.startup.switches import enabled
from attnviz.gui.workers import views_lane

__all__ = ["StartupSteps", "startup_imports_job", "qt_warm_up_steps"]

log = logging.getLogger(__name__)

WAIT_MS = 10  # how often a step waiting for the worker looks again
FIRST_PAINT_MS = 20  # after the first map is set: time for its paint before torch starts loading
QT_NAMES_PER_STEP = 40  # PySide6 names created per step (≤ ~25 ms each here)


def startup_imports_job(view_dependencies: list[str], opening_model=None, opening_text: str | None = None):
    """Views lane: what the GUI thread's start-up steps need, in the order it needs it.

    Yields ``(package, plan)`` for pyqtgraph (once numpy is in) and for the views (once their Qt-free
    dependencies are in), and between them ``("opening", trace or None)``: the stored opening trace of
    model folder ``opening_model`` (of ``opening_text`` when given) when there is a valid one; returns
    the names imported.
    """
    yield "pyqtgraph", pyqtgraph_plan()
    done = import_modules_job(view_dependencies)
    if opening_model is not None:
        from attnviz.runtime.opening import read_opening_trace

        yield "opening", read_opening_trace(opening_model, opening_text)
    yield "attnviz.gui.views", views_plan()
    return done


def qt_warm_up_steps(per_step: int = QT_NAMES_PER_STEP):
    """Create PySide6's QtCore/QtGui/QtWidgets types a few dozen per step (a generator: one step per item).

    Importing pyqtgraph copies every name of these modules, which makes PySide6 build each lazily
    created type at once: ~0.2–0.3 s in one go, a few ms per step here.
    """
    from PySide6 import QtCore, QtGui, QtWidgets

    for module in (QtCore, QtGui, QtWidgets):
        names = dir(module)
        for i in range(0, len(names), per_step):
            for name in names[i:i + per_step]:
                getattr(module, name, None)
            yield


class StartupSteps:
    """``start()`` and the steps that put the first attention map on screen; runs any later steps too
    (:meth:`run_steps`). Reads and writes the window's state; uses its panels, views area and pages."""

    def __init__(self, win):
        self.win = win
        self.state = win.state
        self.started = False
        self.closing = False  # the window closed: start-up steps and idle building stop
        self.views_installed = False  # every view docked (built when first on screen)
        self.load_waits = False  # the first model's load waits until the views are imported
        self._steps = None  # the steps still to run
        self._queued_steps: list = []  # more steps to run after those (building the pages)
        self._plans: dict = {}  # what the start-up worker has delivered so far
        self._step_timer = self._idle_timer = None
        self._opening_name = None
        # a model asked for (the Model panel, a scene, a drop): the first one is no longer held back
        self.state.model.connect(lambda name, _v, _o: name == "loads_asked" and self._release_first_load())

    def _release_first_load(self) -> None:
        self.load_waits = False

    def close(self) -> None:
        """The window closes: the steps under way stop here."""
        self.closing = True
        for steps in [self._steps, *self._queued_steps]:
            if steps is not None:
                steps.close()
        self._steps, self._queued_steps = None, []

    def start(self) -> None:
        """Begin the heavy work: torch and the model on the model lane, the views' Qt-free imports on the
        views lane, and the Qt imports and the views on this thread in short steps."""
        if self.started:
            return
        self.started = True
        first = self.state.model.first.get("model") or self.remembered_model() or None
        opening = self._opening_candidate()
        # torch (the model's load, the catalogue's scan) waits until pyqtgraph and the views are imported and
        # the first map is drawn (a bundled model's stored opening trace needs no torch):
        # - importing torch on a worker while this thread imported pyqtgraph crashed PySide6 6.11 (a segfault
        #   in its attribute lookup while painting, 4-6 of 6 runs when the window's start-up was the first
        #   in the process to import pyqtgraph; 0 of 8 with torch held back; tests/gui/test_startup_order.py);
        # - both want the interpreter lock, and the first map would wait for half of torch's import.
        self.load_waits = not self.views_installed
        if not self.load_waits:  # started again after the views were installed
            self.win.load_model(first)
            self._scan_catalogue()
        self._plans.clear()
        # the views' dependencies need no torch (a test keeps it so): on the torch-free views lane they are
        # ready while torch still loads, and the stored opening trace is read there too
        # (bound methods, no closures: nothing outside the window keeps it alive once it is deleted)
        views_lane().submit(None, startup_imports_job, list(VIEW_DEPENDENCIES), opening, self.state.model.first.get("text"),
                            on_progress=self._plan_arrived, on_result=self._plans_done,
                            on_error=self._startup_failed)
        self._steps = self._startup_steps()
        self._next_step()

    def _timer(self, slot) -> QTimer:
        # a single-shot timer owned by the window: QTimer.singleShot(ms, self, bound_method) keeps the
        # method (and so the window, its views and their pyqtgraph menus) alive if the window is deleted
        # while the call is pending
        timer = QTimer(self.win)
        timer.setSingleShot(True)
        timer.timeout.connect(slot)
        return timer

    def remembered_model(self) -> str:
        """The last session's model if it still exists (a bundled name or a folder); else nothing, and the
        window opens on the default model instead of a "cannot load" notice over empty views (a folder
        deleted since, e.g. a temporary one)."""
        from pathlib import Path

        from attnviz.io import bundled_models

        ref = self.win.settings.last_model
        if not ref or ref in bundled_models() or Path(ref).expanduser().is_dir():
            return ref
        log.info("the last session's model %s is gone; opening the default model", ref)
        return ""

    def _opening_candidate(self):
        """The folder of the first model if it is a bundled one (it may have a stored opening trace)."""
        from attnviz.gui.panels.model_jobs import DEFAULT_MODEL
        from attnviz.io import assets_dir, bundled_models

        names = bundled_models()
        ref = self.state.model.first.get("model") or self.remembered_model() or DEFAULT_MODEL
        if ref not in names:
            return None
        self._opening_name = ref
        return assets_dir() / "models" / ref

    def _load_first_model(self) -> None:
        """The first model's load, held back until the views are imported and the first map drawn: now (once)."""
        if self.load_waits:
            self.load_waits = False
            self.win.load_model(self.state.model.first.get("model") or self.remembered_model() or None)
            self._scan_catalogue()

    def _scan_catalogue(self) -> None:
        # the model list's details (task, size, metrics): on the background lane, which imports torch
        # first, so with the model's load and not before the opening trace
        from attnviz.gui.panels.model_catalogue import scan_bundled
        from attnviz.gui.workers import run_job

        run_job(scan_bundled, on_result=self.win.model_panel.set_catalogue, on_error=self.win.notify)

    def run_steps(self, steps) -> None:
        """Run generator ``steps`` one item per event-loop turn, after the steps already under way."""
        if self._steps is None:
            self._steps = steps
            self._next_step()
        else:
            self._queued_steps.append(steps)

    def _plan_arrived(self, item) -> None:
        key, value = item
        self._plans[key] = value

    def _plans_done(self, _imported) -> None:
        self._plans["done"] = True

    def _next_step(self) -> None:
        """Run one item of ``self._steps`` and schedule the next (an int item: wait that many ms first)."""
        steps = self._steps
        if steps is None:
            return
        if self.closing:  # a closed window builds nothing more (a test may close it mid-start-up)
            steps.close()
            self._steps = None
            return
        try:
            delay = next(steps)
        except StopIteration:
            self._steps = self._queued_steps.pop(0) if self._queued_steps else None
            if self._steps is not None:
                self._step_timer.start(0)
            return
        except Exception as exc:  # noqa: BLE001 - a broken import must leave a notice, not a dead window
            self._steps = None
            self._startup_failed(f"{type(exc).__name__}: {exc}")
            log.exception("start-up step failed")
            return
        if self._step_timer is None:
            self._step_timer = self._timer(self._next_step)
        self._step_timer.start(delay or 0)

    def _startup_failed(self, message: str) -> None:
        self._plans["failed"] = message
        self._load_first_model()
        self.win.notify(f"the attention views could not be loaded ({message})", "error")

    def _startup_steps(self):
        if enabled("qt_warm_up"):  # else pyqtgraph's import creates them all in one turn
            yield from qt_warm_up_steps()
        for package in ("pyqtgraph", "attnviz.gui.views"):
            while package not in self._plans:
                if "failed" in self._plans:
                    return
                yield WAIT_MS
            # switched off: an empty plan, i.e. the ordinary import in this one step
            stepper = SteppedImport(package, self._plans[package] if enabled("stepped_import") else [])
            while True:
                with gc_paused():  # no collection walks the heap in the middle of an import
                    more = stepper.step()
                if not more:
                    break
                yield
        while "done" not in self._plans:  # the views' Qt-free dependencies: imported with the plan
            if "failed" in self._plans:
                return
            yield WAIT_MS
        yield from self._install_views_steps()

    def _install_views_steps(self):
        """Dock every view (placeholders), then build those on screen one per step, then draw."""
        from attnviz.gui.panels.views_area import discover_view_classes

        if self.win.views_area.docks:  # installed already (the views are built once per window)
            return
        try:
            with gc_paused():
                from attnviz.gui.views.compare_view import CompareView

                classes = [*discover_view_classes(), CompareView]  # Compare last: it follows the pinned trace
        except Exception as exc:  # noqa: BLE001 - a broken views package must not take the app down
            log.exception("cannot import the attention views")
            self.win.notify(f"the attention views could not be loaded ({type(exc).__name__}: {exc})", "error")
            classes = []
        area = self.win.views_area
        # nothing in the area is painted until the first map can be: docks, placeholders and empty views
        # would each be painted once on the way (two or three paints of every view on screen before the one
        # that matters, ~40-90 ms of the GUI thread here); their layout still happens meanwhile
        area.setUpdatesEnabled(False)
        try:
            style = self.win.pages.make_style()
            area.install(classes, self.state.selection, style, build=False)
            state = self.win.settings.layout("views")
            if state is not None:
                area.restoreState(state)
            yield  # Qt settles which tab of each group is in front
            while area.build_visible_step():  # made in one turn, docked in the next
                yield
            # the colour maps' lookup tables (pyqtgraph reads them from files) in turns of their own: in the
            # first map's paint they were ~10-20 ms of its 90-100 ms turn
            from attnviz.gui.style import colour_lut

            for diverging in (False, True):
                colour_lut(style, diverging)
                yield
            # a turn between building and drawing: the area's own timer may have built the views on screen in
            # the turn this step ran in, and building them and drawing the first map in one go froze the window
            yield
        finally:
            area.setUpdatesEnabled(True)  # the next paint is the first map (or the views waiting for the model)
        self.views_installed = True
        self.win.views_ready.emit()
        self._show_opening_trace()
        # torch's load a frame later: its native libraries' preload on a worker took one of the two cores in
        # the very turn the first map was painted (that turn 90-100 ms wall for ~70 ms of the GUI thread's CPU)
        yield FIRST_PAINT_MS
        self._load_first_model()
        self.win.pages.prepare()

    def install_views_now(self) -> None:
        """Do at once what the start-up steps do once the views are imported (scripts and tests)."""
        for _ in self._install_views_steps():
            pass

    def build_remaining_views(self) -> None:
        """Idle time after start-up: build the views not built yet, one per event-loop turn."""
        if not self.closing and self.win.views_area.build_next() is not None:
            if self._idle_timer is None:
                self._idle_timer = self._timer(self.build_remaining_views)
            self._idle_timer.start(0)

    def _show_opening_trace(self) -> None:
        """Draw the first model's stored opening trace before torch has loaded (issue 18's first map).

        ``make assets`` stores each bundled text model's trace of its example sentence, tied to the
        weights by their SHA-256 (:mod:`attnviz.runtime.opening`); a stale or missing one is never shown.
        When the live model has loaded it runs the same sentence and its trace, with the same numbers,
        replaces this one without clearing the views in between.
        """
        if self.state.shown.trace is not None or self.state.model.loaded is not None:
            return
        if "opening" in self._plans:  # read on the views lane
            trace = self._plans["opening"]
        else:  # install_views_now: read here
            from attnviz.runtime.opening import read_opening_trace

            folder = self._opening_candidate()
            trace = read_opening_trace(folder) if folder is not None else None
        ref = self._opening_name
        text = trace.description.opening_text if trace is not None else None
        if trace is None or (self.state.model.first.get("text") or text) != text:
            return
        self.state.model.update(opening_ref=ref, new_model=True)  # its starting view, as its live run would choose
        self.win.input_panel.set_text(text, submit=False)
        self.win.show_trace(trace, text)
