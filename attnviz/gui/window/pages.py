"""The main window's pages and looks: the Training and Walkthrough tabs, theme, colour map, presentation.

A component of :class:`attnviz.gui.window.main_window.MainWindow`: it builds the pages into the window's
state (``state.pages``), follows the state's loaded model and shown trace into the walkthrough, and uses the
window's ``settings``, ``lane``, tabs and panels.
"""

from __future__ import annotations

import gc

from PySide6.QtWidgets import QApplication

from attnviz.gui.panels.appearance import compose_style, fill_page, presentation_font
from attnviz.gui.heavy_imports import import_modules_job
from attnviz.gui.startup.stepped_import import import_plan
from attnviz.gui.workers import run_job

__all__ = ["Pages", "PAGE_DEPENDENCIES", "WARM_UP_MODULES", "page_imports_job", "paint_after_turns",
           "FIRST_SHOW_SETTLE_TURNS"]

# Qt-free modules the Training and Walkthrough pages import, loaded on a worker before the pages are
# built on the GUI thread
PAGE_DEPENDENCIES = ("attnviz.analysis.sandbox", "attnviz.runtime.permutation", "attnviz.whatif",
                     "attnviz.tasks", "attnviz.training.snapshots")
# the pages' own Qt modules: imported on the GUI thread a module per event-loop turn (the walkthrough
# package, then the training panel's modules)
PAGE_PACKAGE = "attnviz.gui.walkthrough"
PAGE_MODULES = ("attnviz.gui.panels.training_panel",)
# torch.optim imports torch._dynamo (and sympy, ~800 modules) on its first optimizer; importing that in
# the background once the pages are built keeps the first training start free of import hiccups
WARM_UP_MODULES = ("torch._dynamo", "attnviz.training.loop")
# the Training tab's first show: its page is painted only after this many event-loop turns, once its
# layouts have settled at its real size (issue 18: each pass repainted both plot views, 8 paints and a
# 80-140 ms freeze; 5 paints and 55-65 ms so)
FIRST_SHOW_SETTLE_TURNS = 3


def paint_after_turns(widget, turns: int) -> None:
    """Hold ``widget``'s painting for ``turns`` event-loop turns (its layouts settle meanwhile), then
    turn its updates on: it is painted once, at its settled size. The timer is the widget's child."""
    from PySide6.QtCore import QTimer

    widget.setUpdatesEnabled(False)
    timer = QTimer(widget)
    timer.setSingleShot(True)
    left = [turns]

    def turn() -> None:
        left[0] -= 1
        if left[0] > 0:
            timer.start(0)
            return
        widget.setUpdatesEnabled(True)
        timer.deleteLater()

    timer.timeout.connect(turn)
    timer.start(0)


def page_imports_job(names: list[str]) -> list:
    """Worker: import the pages' Qt-free dependencies; returns the import plan of their Qt modules."""
    import_modules_job(names)
    return import_plan(PAGE_PACKAGE, within="attnviz.gui", extra=PAGE_MODULES)


class Pages:
    """Builds the heavy tab pages once their modules are imported, and applies the view style."""

    def __init__(self, win, presentation: bool):
        self.win = win
        self.state = win.state
        self.view_style = None
        self.warm = False  # every heavy import is done
        self.presentation = presentation
        self._base_font = None
        self._started = self._first_run_over = self._training_page_seen = False
        self._training_parts = self._training_style = None  # the TrainingPanel while it is built in parts
        self._walkthrough_parts = self._walkthrough_style = None
        self._snapshots_pending = None  # (snapshots, causal) of the loaded model, for the training tab
        self._snapshots_shown = None  # the pending snapshots the Training panel last got
        self._walkthrough_fed = (None, None, None)  # (model, trace, input) the walkthrough last got
        self._walkthrough_input = (None, None)  # (text, image) of the shown trace
        self.state.model.connect(self._model_changed)
        self.state.shown.connect(self._shown_changed)

    @property
    def training(self):
        return self.state.pages.training

    @property
    def walkthrough(self):
        return self.state.pages.walkthrough

    def _model_changed(self, name, value, _old) -> None:
        if name == "loaded" and self.walkthrough is not None:  # the what-if lab drops the old model's results
            self.walkthrough.set_model(value)
            self._walkthrough_fed = (value, None, self._walkthrough_fed[2])

    def _shown_changed(self, name, value, _old) -> None:
        if name != "trace":
            return
        if value is not None:  # the walkthrough's own runs take the shown trace's input (set just before it)
            source = self.state.shown.source
            self._walkthrough_input = (None, source) if "image" in value else (source, None)
        elif self.walkthrough is not None:  # nothing shown: nor here
            self.walkthrough.set_trace(None, self.state.shown.empty_reason)
            self._walkthrough_fed = (self._walkthrough_fed[0], None, self._walkthrough_fed[2])

    @property
    def snapshots_current(self) -> bool:
        """The loaded model's snapshots (or none) are what the Training panel shows."""
        return self._snapshots_pending is not None and self._snapshots_shown is self._snapshots_pending

    def set_snapshots(self, snapshots, causal) -> None:
        """The loaded model's stored snapshots (or none) for the Training tab's replay and curves."""
        pending = self._snapshots_pending = (snapshots, causal)
        if self.training is not None:
            # the Training tab's replay and curves in a turn of their own: with the tab in front, the
            # rest of a model switch and its repaint in one turn froze the window for 80+ ms
            self.win.run_steps(self._snapshots_step(self.state.model.loaded, pending))

    def _snapshots_step(self, loaded, pending):
        yield
        if self.state.model.loaded is loaded and self._snapshots_pending is pending:  # no newer load since
            yield from self._pending_snapshot_steps()

    def prepare(self, first_run_over: bool = False) -> None:
        """Once the views and the live model's first attention map are on screen (or the first model or
        input failed): import the pages' dependencies on a worker, then build the pages. Before that,
        every import would delay the first map, and building the pages while torch and the model load
        (a stored opening trace is on screen meanwhile) doubled each step's freeze: both threads want the
        interpreter lock."""
        live = self.state.shown.trace is not None and self.state.model.loaded is not None
        self._first_run_over = self._first_run_over or first_run_over or live
        if self._started or not self.win.startup.views_installed or not self._first_run_over:
            return
        self._started = True
        run_job(page_imports_job, list(PAGE_DEPENDENCIES), on_result=self._install_pages, on_error=self.win.notify)

    def _install_pages(self, plan=None) -> None:
        """The Training and Walkthrough tabs, in short steps (their Qt modules are imported on the GUI
        thread, module by module along ``plan``; building both pages at once froze it for ~0.7 s)."""
        if self.win.startup.closing:  # closed before its imports came back: build nothing more
            return
        self.win.run_steps(self._page_steps(plan or []))

    def _page_steps(self, plan):
        from attnviz.gui.gc_pause import gc_paused
        from attnviz.gui.startup.stepped_import import SteppedImport

        stepper = SteppedImport(PAGE_PACKAGE, plan)
        while True:
            with gc_paused():
                more = stepper.step()
            if not more:
                break
            yield
        if self.training is None and self._training_parts is None:
            from attnviz.gui.panels.training_panel import TrainingPanel
            from attnviz.tasks import task_names

            # built in parts, one per turn (all at once: ~0.1 s); the tab keeps its "Preparing…" page
            # until every part is built, and with the tab in front (or brought there) the rest is built at once
            self._training_parts = TrainingPanel(task_names(), style=self.view_style, parent=self.win, stepped=True)
            self._training_style = self.view_style
            while (self.training is None and self.win.tabs.currentWidget() is not self.win.training_page
                   and self._training_parts.build_step()):
                yield
            self._install_training()
            yield  # the panel's first content in a turn of its own
        for _ in self._pending_snapshot_steps():
            yield
        yield
        if self.walkthrough is None and self._walkthrough_parts is None:
            from attnviz.gui.walkthrough import WalkthroughPage, lane_runner

            self._walkthrough_parts = WalkthroughPage(self.state.selection, self.view_style, lane_runner(self.win.lane),
                                                      self.win, stepped=True)
            self._walkthrough_style = self.view_style
            while (self.walkthrough is None and self.win.tabs.currentWidget() is not self.win.walkthrough_page
                   and self._walkthrough_parts.build_step()):
                yield
            self._install_walkthrough()
        # start-up is over: what it built lives for the session; later collections skip it
        gc.freeze()
        if not self.warm:
            # on the model lane, not beside it: importing torch._dynamo while a model runs can hand the
            # run half-initialised torch modules ("'prims' object has no attribute 'sum'", seen on a
            # model switch during the warm-up)
            self.win.lane.submit("warm-up", import_modules_job, list(WARM_UP_MODULES), on_result=self._warmed_up)

    def _install_training(self) -> None:
        """Put the Training panel being built on its page, finished at once if parts remain."""
        panel = self._training_parts
        if panel is None or self.training is not None:
            return
        panel.finish_building()
        self._training_parts = None
        if self._training_style is not self.view_style:  # the style changed while it was being built
            panel.set_style(self.view_style)
        self.state.pages.training = panel
        panel.open_model.connect(self.win.load_model)
        panel.notice.connect(self.win.notify)
        box = self.win.model_panel.device_box
        if box.count() > 1:
            panel.set_devices([box.itemText(i) for i in range(1, box.count())])
        fill_page(self.win.training_page, panel)
        # not painted until its first show has settled (it is hidden meanwhile: nothing to see)
        self.win.training_page.setUpdatesEnabled(False)
        if self.win.tabs.currentWidget() is self.win.training_page:
            self._first_training_show()

    def _first_training_show(self) -> None:
        """The Training page on screen for the first time: laid out at its real size in several passes
        (its plots re-lay out after their first paint), painted once they settled."""
        if not self._training_page_seen:
            self._training_page_seen = True
            paint_after_turns(self.win.training_page, FIRST_SHOW_SETTLE_TURNS)

    def _install_walkthrough(self) -> None:
        """Put the Walkthrough page being built on its tab, finished at once if parts remain."""
        page = self._walkthrough_parts
        if page is None or self.walkthrough is not None:
            return
        page.finish_building()
        self._walkthrough_parts = None
        if self._walkthrough_style is not self.view_style:
            page.set_style(self.view_style)
        self.state.pages.walkthrough = page
        fill_page(self.win.walkthrough_page, page)
        self.tab_changed(self.win.tabs.currentIndex())
        from attnviz.gui.window.scene_actions import apply_pending_walkthrough

        apply_pending_walkthrough(self.win)  # a scene opened before the page existed: its what-if switches

    def show_pending_snapshots(self) -> None:
        """The loaded model's stored snapshots in the Training panel's replay (once per model)."""
        for _ in self._pending_snapshot_steps():
            pass

    def _pending_snapshot_steps(self):
        """:meth:`_show_pending_snapshots` a part per step (the replay, then the curves)."""
        pending = self._snapshots_pending
        if self.training is not None and pending is not None and self._snapshots_shown is not pending:
            self._snapshots_shown = pending
            yield from self.training.model_snapshot_steps(*pending)

    def _warmed_up(self, _done) -> None:
        self.warm = True
        self.win.warmed_up.emit()

    def tab_changed(self, index: int) -> None:
        """Bring the walkthrough up to date, but only while it is on screen: it recomputes a lot. The
        Training tab shown while its panel is being built in parts: the rest is built now."""
        if self._training_parts is not None and self.win.tabs.widget(index) is self.win.training_page:
            self._install_training()
            self.show_pending_snapshots()
        if self.training is not None and self.win.tabs.widget(index) is self.win.training_page:
            self._first_training_show()
        if self._walkthrough_parts is not None and self.win.tabs.widget(index) is self.win.walkthrough_page:
            self._install_walkthrough()  # brings it up to date too (calls this again)
            return
        if self.win.tabs.widget(index) is not self.win.walkthrough_page and self.state.selection.end_detour():
            self.win.statusBar().showMessage("back on the head the other tabs showed before the walkthrough", 6000)
        if self.walkthrough is None or self.win.tabs.widget(index) is not self.win.walkthrough_page:
            return
        if self.state.shown.trace is not None:  # the one default rule's walkthrough head, announced, undone on leaving
            from attnviz.analysis.walkthrough_default import open_walkthrough

            note = open_walkthrough(self.state.selection, self.state.shown.trace)
            if note:
                # the status line, not the notice strip: the walkthrough's own heading says it where the
                # reader looks, and the strip floated over the walkthrough's bottom rows at both sizes
                self.win.statusBar().showMessage(note, 12000)
        model, trace, given = self._walkthrough_fed
        loaded, shown = self.state.model.loaded, self.state.shown.trace
        if loaded is not None and loaded is not model:
            self.walkthrough.set_model(loaded)
        if self._walkthrough_input is not given:  # a new tuple per run (images are arrays: no ==)
            text, image = self._walkthrough_input
            self.walkthrough.set_input(text=text, image=image)
        if shown is not None and shown is not trace:
            self.walkthrough.set_trace(shown)
        elif shown is None and self.state.shown.empty_reason and trace is None:  # built after a refusal
            self.walkthrough.set_trace(None, self.state.shown.empty_reason)
        self._walkthrough_fed = (loaded, shown, self._walkthrough_input)

    def make_style(self):
        """The views' style from the settings, the presentation mode and the screen."""
        settings = self.win.settings
        self.view_style = compose_style(settings.theme, self.presentation, settings.colormap,
                                        self._screen_lines())
        return self.view_style

    def _screen_lines(self) -> int | None:
        """Pixel rows of the screen the window is on (presentation type is in proportion to it)."""
        screen = self.win.screen()
        return screen.size().height() if screen is not None else None

    def restyle(self) -> None:
        """Apply colour map, theme and presentation mode to every view."""
        style = self.make_style()
        self.win.views_area.set_style(style)
        for page in (self.training, self.walkthrough):
            if page is not None:
                page.set_style(style)

    def set_colormap(self, name: str) -> None:
        self.win.settings.colormap = name
        self.restyle()

    def set_theme(self, theme: str) -> None:
        from attnviz.gui.theme import apply_theme

        self.win.settings.theme = theme
        apply_theme(QApplication.instance(), theme)
        self.restyle()

    def set_presentation(self, on: bool) -> None:
        """Large fonts and thick lines for a lecture hall (views and panels)."""
        app = QApplication.instance()
        self._base_font = self._base_font or app.font()
        self.presentation = self.win.settings.presentation = bool(on)
        app.setFont(presentation_font(self._base_font, self.presentation, self._screen_lines()))
        self.restyle()
