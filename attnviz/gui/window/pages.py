"""The main window's pages and looks: the Training and Walkthrough tabs, theme, colour map, presentation.

A mixin of :class:`attnviz.gui.window.main_window.MainWindow` (kept apart so each file stays readable);
it uses the window's ``settings``, ``selection``, ``lane``, ``trace``, ``loaded`` and panels.
"""

from __future__ import annotations

import gc

from PySide6.QtWidgets import QApplication

from attnviz.gui.panels.appearance import compose_style, fill_page, presentation_font
from attnviz.gui.heavy_imports import import_modules_job
from attnviz.gui.startup.stepped_import import import_plan
from attnviz.gui.workers import run_job

__all__ = ["WindowPagesMixin", "PAGE_DEPENDENCIES", "WARM_UP_MODULES", "page_imports_job", "paint_after_turns",
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


class WindowPagesMixin:
    """Builds the heavy tab pages once their modules are imported, and applies the view style."""

    def _prepare_pages(self, first_run_over: bool = False) -> None:
        """Once the views and the live model's first attention map are on screen (or the first model or
        input failed): import the pages' dependencies on a worker, then build the pages. Before that,
        every import would delay the first map, and building the pages while torch and the model load
        (a stored opening trace is on screen meanwhile) doubled each step's freeze: both threads want the
        interpreter lock."""
        live = self.trace is not None and self.loaded is not None
        self._first_run_over = self._first_run_over or first_run_over or live
        if self._pages_started or not self._views_installed or not self._first_run_over:
            return
        self._pages_started = True
        run_job(page_imports_job, list(PAGE_DEPENDENCIES), on_result=self._install_pages, on_error=self.notify)

    def _install_pages(self, plan=None) -> None:
        """The Training and Walkthrough tabs, in short steps (their Qt modules are imported on the GUI
        thread, module by module along ``plan``; building both pages at once froze it for ~0.7 s)."""
        if getattr(self, "_closing", False):  # closed before its imports came back: build nothing more
            return
        self.run_steps(self._page_steps(plan or []))

    def _page_steps(self, plan):
        from attnviz.gui.heavy_imports import gc_paused
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
            self._training_parts = TrainingPanel(task_names(), style=self.view_style, parent=self, stepped=True)
            self._training_style = self.view_style
            while (self.training is None and self.tabs.currentWidget() is not self.training_page
                   and self._training_parts.build_step()):
                yield
            self._install_training()
            yield  # the panel's first content in a turn of its own
        for _ in self._pending_snapshot_steps():
            yield
        yield
        if self.walkthrough is None and self._walkthrough_parts is None:
            from attnviz.gui.walkthrough import WalkthroughPage, lane_runner

            self._walkthrough_parts = WalkthroughPage(self.selection, self.view_style, lane_runner(self.lane), self,
                                                      stepped=True)
            self._walkthrough_style = self.view_style
            while (self.walkthrough is None and self.tabs.currentWidget() is not self.walkthrough_page
                   and self._walkthrough_parts.build_step()):
                yield
            self._install_walkthrough()
        # start-up is over: what it built lives for the session; later collections skip it
        gc.freeze()
        if not self.warm:
            # on the model lane, not beside it: importing torch._dynamo while a model runs can hand the
            # run half-initialised torch modules ("'prims' object has no attribute 'sum'", seen on a
            # model switch during the warm-up)
            self.lane.submit("warm-up", import_modules_job, list(WARM_UP_MODULES), on_result=self._warmed_up)

    def _install_training(self) -> None:
        """Put the Training panel being built on its page, finished at once if parts remain."""
        panel = self._training_parts
        if panel is None or self.training is not None:
            return
        panel.finish_building()
        self._training_parts = None
        if self._training_style is not self.view_style:  # the style changed while it was being built
            panel.set_style(self.view_style)
        self.training = panel
        panel.open_model.connect(self.load_model)
        panel.notice.connect(self.notify)
        box = self.model_panel.device_box
        if box.count() > 1:
            panel.set_devices([box.itemText(i) for i in range(1, box.count())])
        fill_page(self.training_page, panel)
        # not painted until its first show has settled (it is hidden meanwhile: nothing to see)
        self.training_page.setUpdatesEnabled(False)
        if self.tabs.currentWidget() is self.training_page:
            self._first_training_show()

    def _first_training_show(self) -> None:
        """The Training page on screen for the first time: laid out at its real size in several passes
        (its plots re-lay out after their first paint), painted once they settled."""
        if not getattr(self, "_training_page_seen", False):
            self._training_page_seen = True
            paint_after_turns(self.training_page, FIRST_SHOW_SETTLE_TURNS)

    def _install_walkthrough(self) -> None:
        """Put the Walkthrough page being built on its tab, finished at once if parts remain."""
        page = self._walkthrough_parts
        if page is None or self.walkthrough is not None:
            return
        page.finish_building()
        self._walkthrough_parts = None
        if self._walkthrough_style is not self.view_style:
            page.set_style(self.view_style)
        self.walkthrough = page
        fill_page(self.walkthrough_page, page)
        self._tab_changed(self.tabs.currentIndex())
        from attnviz.gui.window.scene_actions import apply_pending_walkthrough

        apply_pending_walkthrough(self)  # a scene opened before the page existed: its what-if switches

    def _show_pending_snapshots(self) -> None:
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
        self.warmed_up.emit()

    def _tab_changed(self, index: int) -> None:
        """Bring the walkthrough up to date, but only while it is on screen: it recomputes a lot. The
        Training tab shown while its panel is being built in parts: the rest is built now."""
        if self._training_parts is not None and self.tabs.widget(index) is self.training_page:
            self._install_training()
            self._show_pending_snapshots()
        if self.training is not None and self.tabs.widget(index) is self.training_page:
            self._first_training_show()
        if self._walkthrough_parts is not None and self.tabs.widget(index) is self.walkthrough_page:
            self._install_walkthrough()  # brings it up to date too (calls this again)
            return
        if self.tabs.widget(index) is not self.walkthrough_page and self.selection.end_detour():
            self.statusBar().showMessage("back on the head the other tabs showed before the walkthrough", 6000)
        if self.walkthrough is None or self.tabs.widget(index) is not self.walkthrough_page:
            return
        if self.trace is not None:  # the one default rule's walkthrough head, announced, undone on leaving
            from attnviz.analysis.walkthrough_default import open_walkthrough

            note = open_walkthrough(self.selection, self.trace)
            if note:
                self.notify(note, "info")
        model, trace, given = self._walkthrough_fed
        if self.loaded is not None and self.loaded is not model:
            self.walkthrough.set_model(self.loaded)
        if self._walkthrough_input is not given:  # a new tuple per run (images are arrays: no ==)
            text, image = self._walkthrough_input
            self.walkthrough.set_input(text=text, image=image)
        if self.trace is not None and self.trace is not trace:
            self.walkthrough.set_trace(self.trace)
        self._walkthrough_fed = (self.loaded, self.trace, self._walkthrough_input)

    def _make_style(self):
        self.view_style = compose_style(self.settings.theme, self._presentation, self.settings.colormap,
                                        self._screen_lines())
        return self.view_style

    def _screen_lines(self) -> int | None:
        """Pixel rows of the screen the window is on (presentation type is in proportion to it)."""
        screen = self.screen()
        return screen.size().height() if screen is not None else None

    def restyle(self) -> None:
        """Apply colour map, theme and presentation mode to every view."""
        style = self._make_style()
        self.views_area.set_style(style)
        for page in (self.training, self.walkthrough):
            if page is not None:
                page.set_style(style)

    def set_colormap(self, name: str) -> None:
        self.settings.colormap = name
        self.restyle()

    def set_theme(self, theme: str) -> None:
        from attnviz.gui.theme import apply_theme

        self.settings.theme = theme
        apply_theme(QApplication.instance(), theme)
        self.restyle()

    def set_presentation(self, on: bool) -> None:
        """Large fonts and thick lines for a lecture hall (views and panels)."""
        app = QApplication.instance()
        self._base_font = self._base_font or app.font()
        self._presentation = self.settings.presentation = bool(on)
        app.setFont(presentation_font(self._base_font, self._presentation, self._screen_lines()))
        self.restyle()
