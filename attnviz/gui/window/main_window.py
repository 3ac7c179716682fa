"""The main window: model, input and prediction panels around the attention views, plus training.

The window assembles components that each own one job and share the window's state (:mod:`.state`: the
loaded model, the shown and pinned trace, the selection, the pages, the lesson — evented models they read,
write and subscribe to): start-up (:mod:`.startup_steps`), model loading (:mod:`.model_loading`), the shown
trace (:mod:`.shown_trace`), the pages and looks (:mod:`.pages`), pin and compare (:mod:`.compare_pin`),
menus (:mod:`.actions`), scenes and lessons (:mod:`.scene_actions`), figures (:mod:`.figure_actions`),
drops (:mod:`.drop`) and the runs on the model lane (:mod:`.runs`).

Start-up is staged so the window paints first: the constructor builds only plain Qt widgets; then
``start()`` loads torch and the model on the model lane and the views' Qt-free dependencies on a worker,
while this thread imports pyqtgraph and the views in short steps and builds the views on screen; the
Training and Walkthrough tabs follow the first map. Every model run happens on the lane; results come back
as signals, stale ones are dropped, and a failure leaves the last good trace on screen.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from attnviz.gui.dialogs.notice_bar import NoticeBar
from attnviz.gui.panels.appearance import placeholder_page
from attnviz.gui.panels.input_panel import InputPanel
from attnviz.gui.panels.model_panel import ModelPanel
from attnviz.gui.panels.part_bar import PartBar
from attnviz.gui.panels.prediction_panel import PredictionPanel
from attnviz.gui.panels.views_area import ViewsArea
from attnviz.gui.window.loading_cover import LoadingCover
from attnviz.gui.settings import AppSettings
from attnviz.gui.window import figure_actions
from attnviz.gui.window.actions import build_actions, follow_system_scheme
from attnviz.gui.window.compare_pin import ComparePin
from attnviz.gui.window.drop import accept_drag, handle_drop
from attnviz.gui.window.model_loading import APP_TITLE, FALLBACK_TEXT, ModelLoading
from attnviz.gui.window.pages import Pages
from attnviz.gui.window.runs import Runs
from attnviz.gui.window.scene_actions import install_scene_actions
from attnviz.gui.window.shown_trace import ShownTrace, selection_words
from attnviz.gui.window.startup_steps import StartupSteps
from attnviz.gui.window.state import WindowState
from attnviz.gui.window.window_size import default_size
from attnviz.gui.workers import Lane

__all__ = ["MainWindow", "FALLBACK_TEXT"]

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """The attnviz window. ``start()`` (called once it is shown) loads the first model."""

    first_painted = Signal()
    trace_shown = Signal(object)  # after every visible view got the new Trace
    model_loaded = Signal(str)
    views_ready = Signal()
    warmed_up = Signal()  # every heavy import is done: nothing left to load in the background
    notice_shown = Signal(str, str)  # text, level

    def __init__(self, settings: AppSettings | None = None, *, model: str | None = None, text: str | None = None,
                 image: str | None = None, presentation: bool | None = None, autostart: bool = True,
                 dtype: str = "auto"):
        super().__init__()
        self.dtype = dtype  # `attnviz gui --dtype`: every model loaded this session runs in it
        self.autostart = autostart  # start() after the first paint (tests may start by hand)
        self._painted = False
        self.settings = settings or AppSettings()
        self.state = WindowState()
        self.state.model.first = {"model": model, "text": text, "image": image}
        self.selection = self.state.selection
        self.selection.restore_kept(self.settings.kept_selections)  # a relaunch opens the head it showed
        # the components (each owns one job; they share ``state``)
        self.startup = StartupSteps(self)
        self.pages = Pages(self, self.settings.presentation if presentation is None else presentation)
        self.model_loading = ModelLoading(self)
        self.shown_trace = ShownTrace(self)
        # Qt appends the application's display name ("attnviz") to a title that does not end with it:
        # titles end with it, so it is said once (the version is in Help ▸ About)
        self.setWindowTitle(APP_TITLE)
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)

        self.lane = Lane(self)  # one model job at a time: torch modules are not re-entrant
        self.runs = Runs(self)  # what goes to the lane and what comes back
        self.warmed_up.connect(self.build_remaining_views)  # start-up is over: hidden views, in idle time
        self._build_body()
        self.compare_pin = ComparePin(self)  # View ▸ Pin this trace: the Compare view follows state.shown.pinned
        self.actions_ = build_actions(self)
        self.scheme_follower = follow_system_scheme(self)  # re-themes on the desktop's light/dark switch
        self.figure_export = None  # the figure exporter, made on first use (figure_actions.exporter)
        self.actions_.update(install_scene_actions(self))  # File ▸ Save/Open scene, Lesson menu
        self.busy_label = QLabel("")
        self.statusBar().addPermanentWidget(self.busy_label)
        self.statusBar().showMessage("starting…")
        self.selection.connect(self._selection_changed)
        geometry, state = self.settings.layout("geometry"), self.settings.layout("state")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(*default_size())
        if state is not None:
            self.restoreState(state)
        if self.pages.presentation:
            self.set_presentation(True)

    # -- the state, read by panels, views and scripts --------------------------------------------
    @property
    def trace(self):
        """The trace every view shows (None: nothing)."""
        return self.state.shown.trace

    @trace.setter
    def trace(self, trace) -> None:
        self.state.shown.trace = trace

    @property
    def loaded(self):
        """The loaded model (None before the first load)."""
        return self.state.model.loaded

    @property
    def model_ref(self) -> str:
        """The loaded model's name or folder, as asked for."""
        return self.state.model.ref

    @property
    def training(self):
        """The Training page's panel, once built."""
        return self.state.pages.training

    @property
    def walkthrough(self):
        """The Walkthrough page, once built."""
        return self.state.pages.walkthrough

    @property
    def views_installed(self) -> bool:
        """Every view docked and those on screen built (``views_ready`` has been emitted)."""
        return self.startup.views_installed

    @property
    def warm(self) -> bool:
        """Every heavy import is done (``warmed_up`` has been emitted)."""
        return self.pages.warm

    @property
    def view_style(self):
        """The views' current style."""
        return self.pages.view_style

    # -- layout ------------------------------------------------------------------------------------
    def _build_body(self) -> None:
        self.notice = NoticeBar(self)
        self.notice.closed.connect(lambda: self.statusBar().clearMessage())
        self.views_area = ViewsArea(self)
        self.part_bar = PartBar(self.selection, self.views_area)
        self.views_area.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.part_bar)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.views_area, "Attention")
        self.training_page = placeholder_page("Preparing the training panel…", self)
        self.tabs.addTab(self.training_page, "Training")
        self.walkthrough_page = placeholder_page("Preparing the step-by-step Q/K/V walkthrough…", self)
        self.tabs.addTab(self.walkthrough_page, "Walkthrough")
        self.tabs.currentChanged.connect(self.pages.tab_changed)
        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.notice.float_over(central, self.tabs.tabBar())  # no layout row: the views never re-lay out

        self.model_panel = ModelPanel(self)
        self.model_panel.model_requested.connect(self.load_model)
        self.model_panel.open_requested.connect(self.model_loading.open_model_dialog)
        self.model_panel.device_changed.connect(self.model_loading.device_changed)
        self.model_panel.set_recent(self.settings.recent("models"))
        self.input_panel = InputPanel(self)
        self.input_panel.text_submitted.connect(self.run_text)
        self.input_panel.image_submitted.connect(self.run_image)
        self.input_panel.token_clicked.connect(self.shown_trace.strip_clicked)
        self.input_panel.notice.connect(lambda t: self.notify(t, "warning"))
        self.prediction_panel = PredictionPanel(self)
        self.prediction_panel.step_requested.connect(self._step)
        # over the figures and the prediction while another model loads (model_loading)
        self.loading_covers = (LoadingCover(self.tabs), LoadingCover(self.prediction_panel))
        self.running_cover = LoadingCover(self.prediction_panel)  # a long input's run (window.runs)
        self.docks = {}
        for name, title, widget, area in (
                ("ModelDock", "Model", self.model_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
                ("InputDock", "Input", self.input_panel, Qt.DockWidgetArea.TopDockWidgetArea),
                ("PredictionDock", "Prediction", self.prediction_panel, Qt.DockWidgetArea.LeftDockWidgetArea)):
            dock = QDockWidget(title, self)
            dock.setObjectName(name)
            dock.setWidget(widget)
            self.addDockWidget(area, dock)
            self.docks[name] = dock
        # model list above the prediction, both left: the attention views get the full remaining width
        self.splitDockWidget(self.docks["ModelDock"], self.docks["PredictionDock"], Qt.Orientation.Vertical)

    # -- start-up and the components' public doors ------------------------------------------------
    def start(self) -> None:
        """Begin the heavy work (see :class:`~attnviz.gui.window.startup_steps.StartupSteps`)."""
        self.startup.start()

    def run_steps(self, steps) -> None:
        """Run generator ``steps`` one item per event-loop turn, after the steps already under way."""
        self.startup.run_steps(steps)

    def install_views_now(self) -> None:
        """Do at once what the start-up steps do once the views are imported (scripts and tests)."""
        self.startup.install_views_now()

    def build_remaining_views(self) -> None:
        """Build the views not built yet, one per event-loop turn (idle time after start-up)."""
        self.startup.build_remaining_views()

    def load_model(self, ref: str | None) -> None:
        """Load a bundled model by name or a model directory (None: the default bundled model)."""
        self.model_loading.load_model(ref)

    def open_model_dialog(self) -> None:
        self.model_loading.open_model_dialog()

    def show_trace(self, trace, source=None, strip=None) -> None:
        """Show a trace made elsewhere (a saved .npz: ``attnviz FILE``) as if the model had just run it."""
        self.shown_trace.show_trace(trace, source, strip)

    def clear_shown(self, message: str | None = None, level: str = "warning", empty_reason: str | None = None) -> None:
        """Show nothing in every view and panel (hidden ones too); with ``message``, say why in a notice,
        with ``empty_reason``, in the views."""
        self.shown_trace.clear(message, level, empty_reason)

    def restyle(self) -> None:
        self.pages.restyle()

    def set_colormap(self, name: str) -> None:
        self.pages.set_colormap(name)

    def set_theme(self, theme: str) -> None:
        self.pages.set_theme(theme)

    def set_presentation(self, on: bool) -> None:
        """Large fonts and thick lines for a lecture hall (views and panels)."""
        self.pages.set_presentation(on)

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.first_painted.emit()
            if self.autostart:
                QTimer.singleShot(0, self.start)  # heavy imports only once the window is on screen

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        from attnviz.gui.panels.compact_layout import arrange_for_size

        arrange_for_size(self)  # a 1280×720 projector: input one line tall, the head map the room

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.settings.layout("state") is None and not self.startup.started:  # first launch: wider model list
            # a quarter of a 1920×1080 window: the model list's held-out column whole
            self.resizeDocks([self.docks["ModelDock"]], [max(400, int(self.width() * 0.26))], Qt.Orientation.Horizontal)
        if self.autostart:
            QTimer.singleShot(1000, self.start)  # in case no paint arrives (minimised, odd platforms)

    def dragEnterEvent(self, event) -> None:
        accept_drag(event)

    def dropEvent(self, event) -> None:
        handle_drop(self, event)

    # -- runs ----------------------------------------------------------------------------------------
    def run_text(self, text: str) -> None:
        """The input panel's text: run it (see :class:`~attnviz.gui.window.runs.Runs`)."""
        self.runs.run_text(text)

    def run_image(self, image) -> None:
        """The input panel's image (a path or a PIL image): run it."""
        self.runs.run_image(image)

    def _step(self, token: str) -> None:
        kind = self.loaded.tokenizer.kind if self.loaded is not None and self.loaded.tokenizer else "char"
        self.input_panel.append_token(token, kind)

    # -- selection -----------------------------------------------------------------------------------
    def _selection_changed(self, state, changed) -> None:
        if "query" in changed:
            self.prediction_panel.set_query(state.query)
        if changed & {"query", "layer", "head", "part"}:
            self.shown_trace.sync_strip()
        self.statusBar().showMessage(selection_words(self.trace, state), 3000)

    def step_selection(self, field: str, delta: int) -> None:
        """Next/previous layer or head, wrapping around (keyboard shortcuts)."""
        if self.trace is None:
            return
        n = self.trace.n_heads if field == "head" else (
            self.trace.layers_in(self.selection.part))
        current = min(getattr(self.selection, field), n - 1)
        self.selection.update(**{field: (current + delta) % n})

    def toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    # -- notices, export, about ----------------------------------------------------------------------
    def notify(self, text: str, level: str = "error", details: str = "") -> None:
        """Show a non-blocking notice and put it in the status bar too; ``details`` (default: the
        text's own, an ``errors.Message``) behind its Details… button."""
        self.notice.show_notice(text, level, details or getattr(text, "details", ""))
        self.statusBar().showMessage(text, 8000)
        self.notice_shown.emit(text, level)

    def current_figure(self):
        """The view "export the current figure" draws (see window/figure_actions.py)."""
        return figure_actions.current_figure(self)

    def export_figure(self) -> None:
        """Export… : the current view, re-drawn at the chosen slide size, as PNG, SVG or PDF."""
        figure_actions.export_figure(self)

    def copy_figure(self) -> None:
        """Copy the current view to the clipboard as a slide-sized image."""
        figure_actions.copy_figure(self)

    def show_about(self) -> None:
        from attnviz.gui.dialogs.about_dialog import AboutDialog

        device = str(self.loaded.device) if self.loaded is not None else "no model loaded"
        AboutDialog(device, self).exec()

    # -- closing -------------------------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        self.startup.close()  # start-up was still under way: it stops here
        from attnviz.gui.panels.trace_defaults import input_id

        self.selection.keep(self.model_ref, input_id(self.trace))  # its query, with the input it belongs to
        self.settings.kept_selections = self.selection.kept_states()
        self.settings.set_layout("geometry", self.saveGeometry())
        self.settings.set_layout("state", self.saveState())
        if self.views_area.docks:
            self.settings.set_layout("views", self.views_area.saveState())
        self.settings.sync()
        if self.training is not None:
            self.training.shutdown()
        self.lane.cancel()  # nothing queued starts, nothing running is delivered to a closing window
        self.lane.wait()
        self.selection.disconnect(self._selection_changed)
        super().closeEvent(event)
