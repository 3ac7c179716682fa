"""Where the What-if figure's parts stand on a slide (F5), and the compared row brought into view when docked.

Docked, the predictions and the entropies stand in a row above the two attention maps. Presented on a 1280×720
projector that row took ~200 of the slide's ~550 figure pixels and the maps were drawn at ~190 px (the notes under
them scrolled off the slide). Presented, the four tables stand in two columns beside the maps (predictions, then
entropies; as trained above switched) and the maps get the slide's height. The tables are as narrow as their
numbers allow, so the two maps, side by side, get the rest of the slide's width; the heading keeps one line
(:class:`OneLineHeading`). With a head switched off in a 1216×662 window the maps were 207–217 px: measured, the
height went to the switch bar, the board's gaps, the notes in the large type and a wrapped heading, the width to an
entropy column as wide as its title (whatif_figure now draws a slide with those compacted).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QWidget

__all__ = ["presenting", "tables_beside_maps", "bring_compared_row_into_view", "page_arrangement", "SLIDE_MIN_WIDTH",
           "OneLineHeading"]

# the tables' numbers on a slide at this fraction of their type (~16 px presented at 720 lines, the maps' labels
# ~18): at full size coref's four heads of entropies took 223 px of the 1280×720 slide's width from the maps. Not
# in an export: a 1280×720 page drew them ~11 px
TABLE_ZOOM = 0.85
# an exported page at least this wide (layout px: a 16:9 slide is laid out at 1067 × 600) gets the slide's arrangement
SLIDE_MIN_WIDTH = 1000


def presenting(panel) -> bool:
    """Whether ``panel`` is drawn as a slide: the presentation style (large type: F5), or exported to a wide page."""
    return panel.style.font_scale > 1 or getattr(panel, "export_as_slide", False)


@contextmanager
def page_arrangement(panel, page_width: float):
    """The figure arranged for an exported page ``page_width`` layout px wide, put back after.

    A wide page gets the slide's arrangement (tables beside the maps): docked, a 1280×720 export drew the maps
    ~170 layout px (~200 on the page) under the row of tables. A narrow page (4:3, square) keeps the docked one,
    which stacks what does not fit. Either way the on-screen floor of the maps (the panel's ``_hold_maps``) is let
    go: the page is the limit.
    """
    wide = page_width >= SLIDE_MIN_WIDTH and not presenting(panel)
    if wide:
        panel.export_as_slide = True
        panel._draw()
        _show_new_parts(panel.board)
    row = getattr(panel, "maps_row", None)
    held = row.minimumHeight() if row is not None and shiboken6.isValid(row) else 0
    if held:
        row.setMinimumHeight(0)
    try:
        yield
    finally:
        if held and shiboken6.isValid(row):
            row.setMinimumHeight(held)
        if wide:
            panel.export_as_slide = False
            panel._draw()


def tables_beside_maps(maps_row: QWidget, tops: list, entropies: list, zoom: float = TABLE_ZOOM) -> QWidget:
    """One row: ``maps_row`` (the two maps side by side, taking the spare width and height) and, right of it, the
    prediction tables ``tops`` and the ``entropies`` in two columns, as trained above switched, their numbers at
    ``zoom`` of their type."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(16)
    # side by side, never stacked: stacked, each map would get half the slide's height
    maps_row.setMinimumWidth(maps_row.one_line_width())
    lay.addWidget(maps_row, 1)
    tables = QGridLayout()
    tables.setContentsMargins(0, 0, 0, 0)
    tables.setHorizontalSpacing(12)
    tables.setVerticalSpacing(10)
    for col, pair in enumerate((tops, entropies)):
        # as narrow as keeps every number (their preferred cells took ~160 px of the maps' width), the two of
        # a column alike (drawn to the same cells)
        width = max(_narrowest_with_numbers(t, zoom) for t in pair)
        for line, table in enumerate(pair):
            table.setFixedWidth(width)
            tables.addWidget(table, line, col)
    lay.addLayout(tables, 0)
    return row


class OneLineHeading(QObject):
    """Keeps a slide's heading on one line, its type shrunk from the board's 1.7 down to 1.3 (still above the 1.2
    line under it) as the board's width asks: "What if: no scaling · T = 2 · no positions · L0·H1, L1·H0 switched
    off (z = 0)" wrapped its "0)" onto a second line, and the maps lost that line's 34 px. Watches the board's
    resizes (F5 and an export lay the board out after the figure is drawn); a child of the heading, it goes with
    it."""

    HIGH, LOW = 1.7, 1.3  # (FigureBoard.add_heading's factor; the floor)

    def __init__(self, board: QWidget, head):
        super().__init__(head)
        self.board, self.head = board, head
        board.installEventFilter(self)  # (before the board's own resizeEvent: its notes are fitted after)
        self.fit(board.width())

    def eventFilter(self, obj, event) -> bool:
        if obj is self.board and event.type() == QEvent.Type.Resize:
            self.fit(event.size().width())
        return False

    def fit(self, width: int) -> None:
        m = self.board.layout().contentsMargins()
        room = width - m.left() - m.right() - 4
        if room <= 0 or not shiboken6.isValid(self.head):
            return
        style = self.board.style
        text = getattr(self.head, "plain_text", self.head.text())
        need = QFontMetricsF(style.font(self.HIGH, True)).horizontalAdvance(text)
        factor = self.HIGH if need <= room else max(self.LOW, self.HIGH * room / need * 0.98)
        self.head.setFont(style.font(factor, True))


def _narrowest_with_numbers(table, zoom: float) -> int:
    """Width of ``table`` (a small MatrixGrid) whose cells still hold their numbers (at ``zoom``: MatrixGrid shrinks
    them to fit, down to its MIN_ZOOM), its title whole and its colour
    bar with both ends labelled (narrower, the bar dropped its "0": an exported slide's "▬ 2.30")."""
    cols = table.values.shape[1]
    left = table.measure_margins()[0]
    cells = left + cols * table.needed_cell()[0] * zoom + 8
    legend = left + table._legend_width() + 2  # (paint_legend's room: from the cells' left to the edge)
    return max(table.minimumSizeHint().width(), math.ceil(cells), math.ceil(legend))


def _show_new_parts(board: QWidget) -> None:
    """Show now what a redraw just put on the shown ``board``: Qt shows a widget added to a visible layout only on
    the next event-loop turn, and the export paints before it (a blank page)."""
    for w in board.findChildren(QWidget, options=Qt.FindDirectChildrenOnly):
        if w.isHidden() and not w.testAttribute(Qt.WA_WState_ExplicitShowHide):
            w.show()


def bring_compared_row_into_view(panel) -> None:
    """Scroll the docked figure (once laid out) so the boxed row of the first map — the position the verdict
    compares — is on screen: in a 1280×720 window translate's row "na" (which wrote "vidas") sat under the
    viewport's edge."""
    def scroll() -> None:
        grid = panel.grids.get("P_before")
        if grid is None or not grid.highlight_rows or not grid.isVisible():
            return
        area, _, ch = grid._cells()
        row = min(grid.highlight_rows)
        top = grid.mapTo(panel.figure_widget, QPoint(0, 0)).y()  # the map's title and key labels
        row_top, row_bottom = top + int(area.top() + row * ch), top + int(area.top() + (row + 1) * ch) + 4
        bar, seen = panel.scroll.verticalScrollBar(), panel.scroll.viewport().height()
        if bar.value() <= row_top and row_bottom <= bar.value() + seen:
            return  # on screen already: the verdict above stays in view
        # the map from its title down when the row is then on screen (its keys named), else the row at the bottom
        bar.setValue(top if row_bottom - top <= seen else row_bottom - seen)

    # after the layout passes the new figure starts (the board's rows, then the scroll area's widget size)
    QTimer.singleShot(0, panel, lambda: QTimer.singleShot(0, panel, scroll))
