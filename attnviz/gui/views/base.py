"""The contract every attention view keeps (small on purpose).

A view is a QWidget that draws a :class:`~attnviz.capture.Trace` (or an analysis result given to it)
and follows one shared :class:`~attnviz.selection.Selection`:

``set_trace(trace)``
    Show a new trace. The view only picks arrays out of it; it never holds or calls a model.
``set_selection(sel)``
    Follow ``sel`` (layer, head, query, key, part). Clicking in the view calls ``sel.update(...)``,
    so every view moves together. Views keep out-of-range selections valid locally (a shorter text,
    fewer layers) and never rewrite the selection just because a trace arrived.
``set_style(style)``
    Apply a :class:`~attnviz.gui.style.ViewStyle` (colour map, fonts, line widths, colours).
``render_figure(painter, rect, scale=1.0)``
    Draw the figure — what the view shows minus its controls, status line and tooltips — into any
    QPainter: a QImage (PNG), a QSvgGenerator (SVG) or a QPdfWriter (PDF). The figure is laid out at
    ``rect.size() / scale`` logical pixels and drawn scaled by ``scale`` into ``rect``: ``scale=1``
    re-flows the figure to the target size; ``scale=2`` gives the on-screen look at twice the
    resolution. Text is drawn with ``drawText`` so it stays text in SVG and PDF.
``hover_text``
    What the status line says about the cell/token under the mouse (tests read it).

In the attention views everything drawn lives in ``self.figure`` (a pyqtgraph GraphicsLayout inside
``self.canvas``), which is why one ``render_figure`` serves them all. The walkthrough's figures are boards
of matrix widgets (:class:`~attnviz.gui.walkthrough.walkthrough_view.WalkthroughView`): the same contract,
with their own frame and ``render_figure``.
"""

from __future__ import annotations

import weakref
from typing import Callable

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QPoint, QPointF, QRectF, QSize
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QGraphicsItem, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from attnviz.gui.style import ViewStyle
from attnviz.gui.widgets.legible import exporting
from attnviz.gui.workers import views_lane
from attnviz.selection import Selection, SelectionState

__all__ = ["BaseView", "ALL_FIELDS", "call_catching"]

ALL_FIELDS = frozenset({"layer", "head", "query", "key", "part"})


class _WeakListener:
    """Selection listener that does not keep a closed view alive and never calls a deleted widget."""

    def __init__(self, view: "BaseView", selection: Selection):
        self.view = weakref.ref(view)
        self.selection = weakref.ref(selection)

    def __call__(self, state: SelectionState, changed: set[str]) -> None:
        view = self.view()
        if view is None or not shiboken6.isValid(view):
            sel = self.selection()
            if sel is not None:
                sel.disconnect(self)
            return
        view._selection_changed(state, set(changed))


def call_catching(fn):
    """``fn()``, or the exception it raised as the result (as the views' lane hands it to ``done``)."""
    try:
        return fn()
    except Exception as exc:  # handed to done(), shown to the user, never a traceback
        return exc


class BaseView(QWidget):
    """Base of every view: canvas, optional controls row, status line, selection and style plumbing."""

    title = "view"
    tab_title: str | None = None  # a shorter name for the dock's tab and menu entry (default: title)
    # why no trace is shown: the refusal of the last input (set with the trace by whoever clears the view);
    # None: no input has run yet
    empty_reason: str | None = None

    @classmethod
    def not_offered_for(cls, trace) -> str | None:
        """Why this view has nothing for ``trace``'s model (its tab is then closed), or None: it is offered."""
        return None

    @classmethod
    def not_offered_for_model(cls, config) -> str | None:
        """The same for a loaded model (its ModelConfig) before any trace of it is shown."""
        return None

    def __init__(self, selection: Selection | None = None, style: ViewStyle | None = None, parent=None):
        super().__init__(parent)
        self.trace = None
        self.selection: Selection | None = None
        self._listener: _WeakListener | None = None
        self.style = style or ViewStyle()
        self.status = QLabel(" ")
        self._controls_hidden: list[QWidget] = []  # hidden by set_controls_visible(False), for its undo
        self._work = None  # (job, fn, done) of the newest background work not delivered yet
        self._make_frame()
        self._build()
        if selection is not None:
            self.set_selection(selection)

    def _make_frame(self) -> None:
        """The pyqtgraph canvas the figure is drawn on, the controls row above it, the status line below.

        A view whose figure is not a pyqtgraph canvas (the walkthrough's boards of matrix widgets) makes
        its own frame here and overrides ``render_figure``, ``figure_size`` and ``_restyle_frame``.
        """
        self.canvas = pg.GraphicsLayoutWidget()
        self.figure: pg.GraphicsLayout = self.canvas.ci
        self.controls = QHBoxLayout()
        self.controls.setContentsMargins(4, 2, 4, 2)
        self.status.setTextInteractionFlags(self.status.textInteractionFlags())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(self.controls)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.status)
        self.canvas.setBackground(self.style.background)

    # -- the contract --------------------------------------------------------------------------
    @property
    def state(self) -> SelectionState:
        """The shared selection's state (the defaults while the view follows none)."""
        return self.selection.state if self.selection is not None else SelectionState()

    @property
    def hover_text(self) -> str:
        """What the status line says about the cell under the mouse (tests read it)."""
        return self.status.text().strip()

    def set_hover_text(self, text: str) -> None:
        self.status.setText(text or " ")

    @property
    def empty_text(self) -> str:
        """What an empty view says: why nothing is shown (an input refused), else "no input yet"."""
        return f"nothing shown — {self.empty_reason}" if self.empty_reason else "no input yet"

    def set_trace(self, trace, empty_reason: str | None = None) -> None:
        """Show ``trace`` (an :class:`attnviz.capture.Trace`) or clear the view with None; ``empty_reason``
        (with None): why nothing is shown, e.g. the refusal of the input that was to replace it."""
        self.trace = trace
        self.empty_reason = empty_reason if trace is None else None
        self._trace_changed()
        if trace is None and self.empty_reason:
            self._say_why_empty()

    def _say_why_empty(self) -> None:
        """Put :attr:`empty_text` in a map view's title: the views drawn on a ``heatmap`` whose own code sets
        their empty title (the head map's) say why they are empty too. The other views say it themselves."""
        heatmap = getattr(self, "heatmap", None)
        if heatmap is not None and hasattr(heatmap, "set_title"):
            heatmap.set_title(self.empty_text)

    def set_selection(self, selection: Selection) -> None:
        """Follow ``selection`` from now on (and stop following the previous one)."""
        if self.selection is not None and self._listener is not None:
            self.selection.disconnect(self._listener)
        self.selection = selection
        self._listener = _WeakListener(self, selection)
        selection.connect(self._listener)
        self._selection_changed(selection.state, set(ALL_FIELDS))

    def set_style(self, style: ViewStyle) -> None:
        """Apply ``style`` to everything the view draws."""
        self.style = style
        self._restyle_frame(style)
        self._style_changed()

    def _restyle_frame(self, style: ViewStyle) -> None:
        """The frame's own colours (the canvas background); the figure's items restyle in ``_style_changed``."""
        self.canvas.setBackground(style.background)

    def widget_pos(self, item, x: float, y: float) -> QPoint:
        """Where data point (x, y) of ``item`` (a ViewBox or graphics item) is in ``canvas.viewport()``
        pixels: for scripted clicks (tests, guided tours)."""
        scene_pt = item.mapViewToScene(QPointF(x, y)) if hasattr(item, "mapViewToScene") else item.mapToScene(QPointF(x, y))
        return self.canvas.mapFromScene(scene_pt)

    def ensure_current(self) -> None:
        """Finish pending background work now, on this thread: an exported figure must be complete."""
        if self._work is None:
            return
        job, fn, done = self._work
        self._work = None
        job.lane.cancel(job.kind)  # its result, if it still comes, is dropped
        done(call_catching(fn))

    def set_controls_visible(self, on: bool) -> None:
        """Figure first (presentation mode, a lesson's scene): hide the controls row, or bring back what
        it hid. Only widgets shown now are hidden and remembered, so a control the view itself keeps
        hidden stays hidden afterwards."""
        if not on:
            for i in range(self.controls.count()):
                w = self.controls.itemAt(i).widget()
                if w is not None and not w.isHidden():
                    w.hide()
                    self._controls_hidden.append(w)
            return
        hidden, self._controls_hidden = self._controls_hidden, []
        for w in hidden:
            if shiboken6.isValid(w):
                w.show()

    def figure_size(self) -> QSize:
        """A good default export size in logical pixels."""
        return QSize(1200, 800)

    def render_figure(self, painter: QPainter, rect: QRectF, scale: float = 1.0) -> None:
        """Draw the figure into ``painter`` filling ``rect`` (see the module docstring)."""
        rect = QRectF(rect)
        scale = float(scale) if scale and scale > 0 else 1.0
        src = QRectF(0, 0, rect.width() / scale, rect.height() / scale)
        old = self.figure.geometry()
        # items cached as device pixmaps on screen must draw themselves here, or SVG/PDF get bitmaps
        cached = [(it, it.cacheMode()) for it in self.canvas.scene().items()
                  if it.cacheMode() != QGraphicsItem.CacheMode.NoCache]
        for it, _ in cached:
            it.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            with exporting(scale):  # laid out for the file: its labels 12 px on the page (widgets/legible.py)
                self._relayout(src)
                painter.save()
                painter.fillRect(rect, QColor(self.style.background))
                painter.setRenderHint(QPainter.Antialiasing, True)
                painter.setRenderHint(QPainter.TextAntialiasing, True)
                painter.setRenderHint(QPainter.LosslessImageRendering, True)  # PDF: exact cell colours, no JPEG
                self.canvas.scene().render(painter, rect, src)
                painter.restore()
        finally:
            self._relayout(old)
            for it, mode in cached:
                it.setCacheMode(mode)

    def _relayout(self, geom: QRectF) -> None:
        self.figure.setGeometry(geom)
        layout = self.figure.layout
        layout.invalidate()
        layout.activate()
        self._after_relayout()

    # -- background work -----------------------------------------------------------------------
    def run_in_background(self, fn: Callable[[], object], done: Callable[[object], None],
                          progress: Callable[[object], None] | None = None) -> None:
        """Run ``fn()`` (numpy only, no Qt) on the views' lane; ``done(result)`` runs later on the GUI
        thread unless newer work of this view was started meanwhile (latest wins) or the view was
        deleted. An exception is passed as the result. ``progress(item)``: on the GUI thread for each
        ``lane.report_progress(item)`` that ``fn`` makes (dropped with the job)."""

        def delivered(result):
            self._work = None
            done(result)

        job = views_lane().submit(("view", id(self)), call_catching, fn, on_result=delivered, on_progress=progress,
                                  owner=self)
        self._work = (job, fn, done)

    @property
    def background_pending(self) -> bool:
        """True while background work for what the view shows has not been delivered (its figure is
        not complete yet: e.g. the All heads grid's statistics of a long trace)."""
        return self._work is not None

    def cancel_background(self) -> None:
        """Drop this view's background work: its result will not be delivered."""
        if self._work is not None:
            job = self._work[0]
            job.lane.cancel(job.kind)
            self._work = None

    # -- hooks for subclasses ------------------------------------------------------------------
    def _build(self) -> None:
        """Create the figure's items and the controls (called once from ``__init__``)."""

    def _trace_changed(self) -> None:
        raise NotImplementedError

    def _selection_changed(self, state: SelectionState, changed: set[str]) -> None:
        """Called with the fields that changed; the base does nothing."""

    def _style_changed(self) -> None:
        raise NotImplementedError

    def _after_relayout(self) -> None:
        """Items that size themselves from the figure geometry update here (default: nothing)."""
