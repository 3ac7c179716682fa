"""Where the What-if figure's parts stand on a slide (F5), and the compared row brought into view when docked.

Docked, the predictions and the entropies stand in a row above the two attention maps. Presented on a 1280×720
projector that row took ~200 of the slide's ~550 figure pixels and the maps were drawn at ~190 px (the notes under
them scrolled off the slide). Presented, the four tables stand in two columns beside the maps (predictions, then
entropies; as trained above switched) and the maps get the slide's height. The tables are as narrow as their
numbers allow, so the two maps, side by side, get the rest of the slide's width.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QWidget

__all__ = ["presenting", "tables_beside_maps", "bring_compared_row_into_view"]


def presenting(panel) -> bool:
    """Whether ``panel`` is drawn in the presentation style (large type: F5)."""
    return panel.style.font_scale > 1


def tables_beside_maps(maps_row: QWidget, tops: list, entropies: list) -> QWidget:
    """One row: ``maps_row`` (the two maps side by side, taking the spare width and height) and, right of it, the
    prediction tables ``tops`` and the ``entropies`` in two columns, as trained above switched."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(24)
    # side by side, never stacked: stacked, each map would get half the slide's height
    maps_row.setMinimumWidth(maps_row.one_line_width())
    lay.addWidget(maps_row, 1)
    tables = QGridLayout()
    tables.setContentsMargins(0, 0, 0, 0)
    tables.setHorizontalSpacing(18)
    tables.setVerticalSpacing(10)
    for col, pair in enumerate((tops, entropies)):
        # as narrow as keeps every number (their preferred cells took ~160 px of the maps' width), the two of
        # a column alike (drawn to the same cells)
        width = max(_narrowest_with_numbers(t) for t in pair)
        for line, table in enumerate(pair):
            table.setFixedWidth(width)
            tables.addWidget(table, line, col)
    lay.addLayout(tables, 0)
    return row


def _narrowest_with_numbers(table) -> int:
    """Width of ``table`` (a small MatrixGrid) whose cells still hold their numbers, its title whole."""
    cols = table.values.shape[1]
    cells = table._measure_margins()[0] + cols * table._needed_cell()[0] + 8
    return max(table.minimumSizeHint().width(), math.ceil(cells))


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
