"""The main window: model, input and prediction panels around the attention views, plus training.

Start-up is staged so the window paints first: the constructor builds only plain Qt widgets; then
``start()`` (startup/window.py) loads torch and the model on the model lane and the views'
Qt-free dependencies on a worker, while this thread imports pyqtgraph and the views in short steps and
builds the views on screen; the Training and Walkthrough tabs follow the first map (panels/window_pages.py).
Every model run happens on the lane (loading a model: panels/window_models.py); results come back as
signals, stale ones are dropped, and a failure leaves the last good trace on screen.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from attnviz.gui.dialogs.notice_bar import NoticeBar
from attnviz.gui.panels import figure_actions
from attnviz.gui.panels.appearance import placeholder_page
from attnviz.gui.panels.input_panel import InputPanel
from attnviz.gui.panels.model_panel import ModelPanel
from attnviz.gui.panels.part_bar import PartBar
from attnviz.gui.panels.trace_defaults import trace_defaults
from attnviz.gui.panels.prediction_panel import PredictionPanel
from attnviz.gui.panels.shown_trace import ShownTraceMixin
from attnviz.gui.panels.views_area import ViewsArea
from attnviz.gui.panels.scene_actions import install_scene_actions
from attnviz.gui.panels.window_actions import build_actions
from attnviz.gui.panels.window_drop import WindowDropMixin
from attnviz.gui.panels.window_models import APP_TITLE, FALLBACK_TEXT, WindowModelsMixin
from attnviz.gui.panels.window_pages import WindowPagesMixin
from attnviz.gui.startup.window import WindowStartupMixin
from attnviz.gui.settings import AppSettings
from attnviz.gui.panels.model_jobs import LayerPreview, run_input_job
from attnviz.gui.workers import Lane
from attnviz.selection import Selection

__all__ = ["MainWindow", "FALLBACK_TEXT"]

log = logging.getLogger(__name__)


def default_size() -> tuple[int, int]:
    """Most of the screen, up to 1920 × 1080: a 1920 × 1080 lecture screen gets ~1824 × 966, so the
    model list's columns and the right dock's tabs fit; a 1366 × 768 laptop gets a window that fits;
    a larger screen does not get a window wider than the figures are laid out for."""
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return 1440, 900
    avail = screen.availableGeometry()
    return min(1920, int(avail.width() * 0.95)), min(1080, int(avail.height() * 0.92))


class MainWindow(WindowStartupMixin, WindowModelsMixin, ShownTraceMixin, WindowPagesMixin, WindowDropMixin,
                 QMainWindow):
    """The attnviz window. ``start()`` (called once it is shown) loads the first model."""

    first_painted = Signal()
    trace_shown = Signal(object)  # after every visible view got the new Trace
    model_loaded = Signal(str)
    views_ready = Signal()
    warmed_up = Signal()  # every heavy import is done: nothing left to load in the background
    notice_shown = Signal(str, str)  # text, level

    def __init__(self, settings: AppSettings | None = None, *, model: str | None = None, text: str | None = None,
                 image: str | None = None, presentation: bool | None = None, autostart: bool = True):
        super().__init__()
        self.autostart = autostart  # start() after the first paint (tests may start by hand)
        self._painted = self._started = self._pages_started = self._first_run_over = self.warm = False
        self._views_installed = False  # every view docked (built when first on screen)
        self._closing = False  # closed: start-up steps and idle building stop
        self._steps = None  # the start-up steps still to run (startup/window.py)
        self._queued_steps: list = []  # more steps to run after those (building the pages)
        self._plans: dict = {}  # what the start-up worker has delivered so far
        self._step_timer = self._idle_timer = None
        self._load_waits = False  # the first model's load waits until the views are imported (startup/window.py)
        self.settings = settings or AppSettings()
        self.selection = Selection()
        self.selection.restore_kept(self.settings.kept_selections)  # a relaunch opens the head it showed
        self.loaded = None
        self.model_ref = ""
        self.trace = None
        self._new_model = False  # the next trace is a new model's first: choose its starting view
        self.training = None  # TrainingPanel, built once pyqtgraph and torch are loaded
        self._training_parts = None  # the TrainingPanel while it is built in parts (window_pages.py)
        self._training_style = None
        self._snapshots_shown = None  # the pending snapshots the Training panel last got
        self.walkthrough = None  # WalkthroughPage (attnviz.gui.walkthrough), built likewise
        self._walkthrough_parts = None
        self._walkthrough_style = None
        self._walkthrough_fed = (None, None, None)  # (model, trace, input) the walkthrough last got
        self._walkthrough_input = (None, None)
        self.view_style = None
        self._first = {"model": model, "text": text, "image": image}
        self._opening_ref: str | None = None  # the model whose stored opening trace is on screen
        self._example_text = ""
        self._snapshots_pending = None  # (snapshots, causal) of the loaded model, for the training tab
        self._presentation = self.settings.presentation if presentation is None else presentation
        self._base_font = None
        # Qt appends the application's display name ("attnviz") to a title that does not end with it:
        # titles end with it, so it is said once (the version is in Help ▸ About)
        self.setWindowTitle(APP_TITLE)
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)

        self.lane = Lane(self)  # one model job at a time: torch modules are not re-entrant
        self.lane.result.connect(self._lane_result)
        self.lane.error.connect(self._lane_error)
        self.lane.progress.connect(self._lane_progress)
        self.lane.busy_changed.connect(self._busy)
        self.warmed_up.connect(self.build_remaining_views)  # start-up is over: the hidden views, in idle time
        self._build_body()
        self.actions_ = build_actions(self)
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
        if self._presentation:
            self.set_presentation(True)

    @property
    def views_installed(self) -> bool:
        """Every view docked and those on screen built (``views_ready`` has been emitted)."""
        return self._views_installed

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
        self.tabs.currentChanged.connect(self._tab_changed)
        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.notice.float_over(central, self.tabs.tabBar())  # no layout row: the views never re-lay out

        self.model_panel = ModelPanel(self)
        self.model_panel.model_requested.connect(self.load_model)
        self.model_panel.open_requested.connect(self.open_model_dialog)
        self.model_panel.device_changed.connect(self._device_changed)
        self.model_panel.set_recent(self.settings.recent("models"))
        self.input_panel = InputPanel(self)
        self.input_panel.text_submitted.connect(self.run_text)
        self.input_panel.image_submitted.connect(self.run_image)
        self.input_panel.token_clicked.connect(self._strip_clicked)
        self.input_panel.notice.connect(lambda t: self.notify(t, "warning"))
        self.prediction_panel = PredictionPanel(self)
        self.prediction_panel.step_requested.connect(self._step)
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

    # -- start-up ----------------------------------------------------------------------------------
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
        if self.settings.layout("state") is None and not self._started:  # first launch: a wider model list
            # a quarter of a 1920×1080 window: the model list's held-out column whole
            self.resizeDocks([self.docks["ModelDock"]], [max(400, int(self.width() * 0.26))], Qt.Orientation.Horizontal)
        if self.autostart:
            QTimer.singleShot(1000, self.start)  # in case no paint arrives (minimised, odd platforms)

    # -- runs ----------------------------------------------------------------------------------------
    def run_text(self, text: str) -> None:
        if self.loaded is not None and self.loaded.config.kind != "vit":
            self.lane.submit("trace", run_input_job, self.loaded, text=text, target=self.input_panel.target,
                             preview_layer=self._preview_layer())

    def run_image(self, image) -> None:
        if self.loaded is None:
            return
        if isinstance(image, str):
            self.settings.add_recent("images", image)
        self.lane.submit("trace", run_input_job, self.loaded, image=image, preview_layer=self._preview_layer())

    def _preview_layer(self) -> int | None:
        """The selected layer, drawn by the head map while a Hugging Face model's forward still runs."""
        return self.selection.layer if self.loaded.info.get("source") == "huggingface" else None

    def _lane_progress(self, kind, item) -> None:
        # the lane drops the items of a superseded run (new input, new model): this one is current
        if kind == "trace" and isinstance(item, LayerPreview) and item.layer == self.selection.layer:
            from attnviz.gui.views.head_map_view import HeadMapView

            for view in self.views_area.views:
                if isinstance(view, HeadMapView):
                    view.show_preview(item, self.selection.head)

    def _lane_result(self, kind: str, value) -> None:
        if kind == "load":
            self._model_loaded(value)
        elif kind == "trace":
            self._show_run(value)

    def _lane_error(self, kind: str, message: str) -> None:
        self._prepare_pages(first_run_over=True)  # training a model is the way out of a failed load
        if kind == "load":
            self.notify(f"cannot load the model: {message}", "error", getattr(message, "details", ""))
            self.model_panel.set_current(self.model_ref)
            if self.loaded is None:
                self.statusBar().showMessage("no model loaded: pick one in the Model panel or open a folder")
        elif kind == "trace" and self.input_panel.mode == "text":
            # the box shows the new text: the views would show another input's figures, so clear them
            # (an image that cannot be decoded never replaces the picture on screen: that trace stays)
            self.clear_shown(message)
        else:
            if kind == "trace":  # the picture on screen stays, and so does its caption
                self.input_panel.image.reject_pending()
            self.notify(message, "warning")

    def _show_run(self, res) -> None:
        previous, trace = self.trace, res.trace
        self.trace = trace
        self.views_area.set_trace(trace)
        self.part_bar.set_trace(trace)
        changes = trace_defaults(previous, trace, self.selection.query, self._new_model,
                                 self.selection.kept(self.model_ref or self._opening_ref or ""))
        self._new_model = False
        if changes:
            self.selection.update(**changes)
        self.prediction_panel.set_trace(trace)
        if res.strip is not None:
            self.input_panel.set_strip(res.strip)
        self._sync_strip()
        if "image" in trace:
            self.input_panel.image.set_preview(trace["image"])
        src, image_input = res.source, "image" in trace
        self._walkthrough_input = (None, src) if image_input else (src, None)
        self._tab_changed(self.tabs.currentIndex())
        notice = trace.meta.get("notice")
        if notice:
            self.notify(notice, "warning")
        elif self.notice.level == "warning":
            self.notice.dismiss()  # the input problem is gone
        self.statusBar().showMessage(
            f"{trace.meta.get('model_name', '')} · {len(trace.tokens)} positions · "
            f"{trace.n_layers} layers × {trace.n_heads} heads · run {1000 * res.seconds:.0f} ms")
        self.trace_shown.emit(trace)
        self._prepare_pages()

    def show_trace(self, trace, source=None) -> None:
        """Show a trace made elsewhere (a saved .npz: ``attnviz FILE``) as if the model had just run it."""
        from attnviz.gui.panels.model_jobs import RunResult

        self._show_run(RunResult(trace, None, source, 0.0))

    def _busy(self, busy: bool) -> None:
        self.busy_label.setText("running…" if busy else "")

    def _step(self, token: str) -> None:
        kind = self.loaded.tokenizer.kind if self.loaded is not None and self.loaded.tokenizer else "char"
        self.input_panel.append_token(token, kind)

    # -- selection & style ---------------------------------------------------------------------------
    def _selection_changed(self, state, changed) -> None:
        if "query" in changed:
            self.prediction_panel.set_query(state.query)
        if changed & {"query", "layer", "head", "part"}:
            self._sync_strip()
        self.statusBar().showMessage(f"layer {state.layer} · head {state.head}"
                                     + (f" · query {state.query}" if state.query is not None else ""), 3000)

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
        """The view "export the current figure" draws (see panels/figure_actions.py)."""
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
        self._closing = True
        for steps in [self._steps, *self._queued_steps]:  # start-up was still under way: it stops here
            if steps is not None:
                steps.close()
        self._steps, self._queued_steps = None, []
        self.selection.keep(self.model_ref)
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
