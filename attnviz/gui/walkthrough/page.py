"""The Walkthrough tab: six steps, matrix form, sandbox and what-if switches, sharing selection and style."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QTabWidget

from attnviz.gui.stepped_build import SteppedBuild
from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.matrix_form_widget import MatrixFormWidget
from attnviz.gui.walkthrough.sandbox_widget import SandboxWidget
from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget
from attnviz.gui.walkthrough.whatif_panel import WhatIfPanel
from attnviz.selection import Selection

__all__ = ["WalkthroughPage"]


class WalkthroughPage(SteppedBuild, QTabWidget):
    """Four sub-tabs. The main window feeds ``set_trace``, ``set_model``, ``set_input`` and ``set_style``.

    Parameters
    ----------
    selection : the window's shared Selection (layer, head, query token).
    style : the current ViewStyle.
    run_async : ``run_async(kind, fn, on_result, on_error)`` for what-if re-runs; pass
        ``lane_runner(window.lane)`` so they queue behind (and never race) the window's own model runs.
    stepped : build only the bare tab widget now and a sub-tab per ``build_step()`` (in one go the four
        froze the GUI thread for ~50 ms); the caller shows the page only once ``built``
        (:class:`attnviz.gui.stepped_build.SteppedBuild`).
    """

    def __init__(self, selection: Selection | None = None, style: ViewStyle | None = None, run_async=None,
                 parent=None, *, stepped: bool = False):
        super().__init__(parent)
        self._start_building(self._build_steps(selection or Selection(), style, run_async), stepped)

    def _build_steps(self, selection: Selection, style: ViewStyle | None, run_async):
        # each sub-tab goes into the (hidden) tab widget as soon as it is built: a window closed meanwhile
        # deletes it with the page instead of leaving a parentless widget behind
        self.steps = WalkthroughWidget(selection, style)
        self.addTab(self.steps, "Six steps")
        yield
        self.matrix = MatrixFormWidget(selection, style)
        self.addTab(self.matrix, "Matrix form")
        yield
        self.sandbox = SandboxWidget(style)
        self.addTab(self.sandbox, "Sandbox")
        yield
        self.whatif = WhatIfPanel(run_async, selection, style)
        self.addTab(self.whatif, "What if")
        self.setTabToolTip(0, "one query of one head, step by step, with the model's own numbers")
        self.setTabToolTip(1, "the whole layer as matrices: Q = XW_Q … Z = PV, heads × W_O, residual and MLP")
        self.setTabToolTip(2, "type a toy X and weights; every step is recomputed as you type")
        self.setTabToolTip(3, "switch the scale, the mask, positions or heads and re-run the model")

    def set_trace(self, trace, empty_reason: str | None = None) -> None:
        """Show ``trace`` on every tab, or nothing (with ``empty_reason``: why, e.g. an input was refused)."""
        for w in (self.steps, self.matrix, self.whatif):
            w.set_trace(trace, empty_reason)

    def set_model(self, loaded) -> None:
        self.whatif.set_model(loaded)

    def set_input(self, text: str | None = None, image=None) -> None:
        self.whatif.set_input(text=text, image=image)

    def set_style(self, style: ViewStyle) -> None:
        for w in (self.steps, self.matrix, self.sandbox, self.whatif):
            w.set_style(style)

    def current_view(self):
        """The visible sub-tab: what "export the current figure" should draw."""
        return self.currentWidget()

    def render_figure(self, painter: QPainter, rect: QRectF, scale: float = 1.0) -> None:
        self.currentWidget().render_figure(painter, rect, scale)

    def figure_size(self) -> QSize:
        return self.currentWidget().figure_size()
