"""The walkthrough widgets (six steps, matrix form, sandbox, what-if) under the one view contract.

:class:`WalkthroughView` is a :class:`~attnviz.gui.views.base.BaseView`: ``set_trace``, ``set_selection`` (a
weak listener on the shared :class:`~attnviz.selection.Selection`), ``set_style``, ``hover_text``,
``render_figure`` / ``figure_size`` / ``ensure_current``. Its figure is a :class:`FigureBoard` of
:class:`MatrixGrid` widgets rather than a pyqtgraph canvas, so it makes its own frame (``_make_frame``) and
draws the board (:class:`~attnviz.gui.walkthrough.figure.FigureHostMixin`); the layouts (controls above the
figure, or editors beside it in a splitter) are made here.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

from attnviz.gui.style import ViewStyle
from attnviz.gui.views.base import BaseView
from attnviz.gui.walkthrough.figure import FigureBoard, FigureHostMixin, FigureWidget
from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
from attnviz.selection import Selection, SelectionState

__all__ = ["WalkthroughView"]


class WalkthroughView(FigureHostMixin, BaseView):
    """Base of the walkthrough widgets: style, trace, selection, status line, figure board and grids.

    Subclasses build their controls in ``_build`` and call :meth:`_lay_out`; they implement
    ``_update`` (recompute after a trace or selection change), and may override
    ``_selection_changed`` (default: ``_update``) and ``_style_changed`` (default: ``_update``).
    The figure host comes first: its ``render_figure``, ``figure_size`` and ``ensure_current`` draw the
    board instead of a canvas.
    """

    title = "view"
    follows_selection = True  # the sandbox has its own toy input and no shared selection

    def __init__(self, selection: Selection | None = None, style: ViewStyle | None = None, parent=None):
        # a walkthrough widget made alone still follows a selection of its own (the sandbox follows none)
        super().__init__((selection or Selection()) if self.follows_selection else None, style, parent)

    def _make_frame(self) -> None:
        """The figure board and its grids; the layout is made by :meth:`_lay_out`, from ``_build``."""
        self.grids: dict[str, MatrixGrid] = {}
        self.figure_widget = FigureWidget(self.style)
        self.board = FigureBoard(self.style)

    def _restyle_frame(self, style: ViewStyle) -> None:
        self.figure_widget.set_style(style)
        self.board.set_style(style)

    # -- shared building blocks -----------------------------------------------------------------------
    def _grid(self, name: str, values, title: str, **kw) -> MatrixGrid:
        """A grid of this figure, registered in ``self.grids`` and reporting its hovered cell."""
        g = MatrixGrid(name, self.style)
        g.set_data(values, title=title, **kw)
        self._adopt(g)
        return g

    def _adopt(self, grid: MatrixGrid) -> None:
        grid.hovered.connect(self.set_hover_text)
        self.grids[grid.name] = grid

    def _lay_out(self, controls=None, side: QWidget | None = None, side_width: int = 340, top=None) -> None:
        """Controls row (optional) above the figure, or ``side`` editors beside it; status line below.

        ``top`` is laid out above the board inside the figure (it is exported with it).
        """
        fl = QVBoxLayout(self.figure_widget)
        fl.setContentsMargins(0, 0, 0, 0)
        if top is not None:
            fl.addLayout(top) if not isinstance(top, QWidget) else fl.addWidget(top)
        fl.addWidget(self.board, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.figure_widget)
        self.scroll = scroll
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        if controls is not None:
            layout.addLayout(controls) if not isinstance(controls, QWidget) else layout.addWidget(controls)
        if side is None:
            layout.addWidget(scroll, 1)
        else:
            side_scroll = QScrollArea()
            side_scroll.setWidgetResizable(True)
            side_scroll.setWidget(side)
            side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
            # never narrower than the editors with a vertical scroll bar beside them: without a sideways scroll
            # bar they were cut (the sandbox's scale box and attention line lost ~25 px in a 1280×720 window)
            need = (side.minimumSizeHint().width() + side_scroll.verticalScrollBar().sizeHint().width()
                    + 2 * side_scroll.frameWidth())
            side_scroll.setMinimumWidth(max(side_width - 20, need))
            side_width = max(side_width, need)
            self.splitter = QSplitter()
            self.splitter.addWidget(side_scroll)
            self.splitter.addWidget(scroll)
            self.splitter.setStretchFactor(1, 1)
            self.splitter.setSizes([side_width, 1400 - side_width])
            layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status)

    def set_controls_visible(self, on: bool) -> None:
        """Presentation mode: only the figure (controls, side editors and status line hide; they come
        back as they were)."""
        if not on:
            hidden = getattr(self, "_hidden_for_figure", [])
            layout = self.layout()
            for w in _widgets(layout):
                if w is self.scroll:
                    continue
                if w is getattr(self, "splitter", None):
                    w = w.widget(0)
                if not w.isHidden():
                    w.hide()
                    hidden.append(w)
            self._hidden_for_figure = hidden
        else:
            for w in getattr(self, "_hidden_for_figure", []):
                if shiboken6.isValid(w):
                    w.show()
            self._hidden_for_figure = []

    # -- hooks -------------------------------------------------------------------------------------------
    def _build(self) -> None:
        """Create the controls and call :meth:`_lay_out` (once, from ``__init__``)."""
        self._lay_out()

    def _trace_changed(self) -> None:
        self._update()

    def _selection_changed(self, state: SelectionState, changed: set[str]) -> None:
        self._update()

    def _style_changed(self) -> None:
        self._update()

    def _update(self) -> None:
        """Recompute and redraw the figure."""


def _widgets(layout) -> list[QWidget]:
    """The widgets of ``layout`` and its nested layouts, in order."""
    out = []
    for i in range(layout.count()):
        item = layout.itemAt(i)
        if item.widget() is not None:
            out.append(item.widget())
        elif item.layout() is not None:
            out.extend(_widgets(item.layout()))
    return out
