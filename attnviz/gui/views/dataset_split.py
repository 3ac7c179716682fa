"""How the data-set view shares its height: the figure (in a scroll area) over the table and the top inputs.

A wide view splits its height (:data:`BELOW_SHARE` under the figure, the table the height of its rows), its figure
scrolling when a real model's layers need more than its share (30 layers had 30 rows in ~40 px at 1920×1080, the
mean map 50 px and its colour bar's words cut); a narrow one (the right group's dock at 1280×720, ~274 px) shows the figure alone, at least as tall as its two maps need
(it scrolls rather than shrinks), and the table and the top inputs when its Table button is pressed. Until the
user drags a handle the split follows the view's size.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QPushButton, QScrollArea, QSplitter, QTableWidget, QWidget

from attnviz.gui.views.all_heads_pages import even_page
from attnviz.gui.views.dataset_pages import MIN_MAP_PX, PAGE_MAP_CHROME_H, ROW_PX, page_fit

__all__ = ["DatasetSplit", "BELOW_SHARE", "TABLE_ROWS", "NARROW_WIDTH", "NARROW_FIGURE_PX", "NARROW_ROW_PX",
           "GRID_CHROME_PX", "MEAN_MAP_PX", "HEAD_PX", "MAX_CELL_LABELS", "figure_need"]

BELOW_SHARE = 0.35  # of the view's splitter for the table and the top inputs (the figure: the rest)
TABLE_ROWS = 8  # table rows given room before the top inputs get the rest
NARROW_WIDTH = 440  # px: a view narrower than this shows the figure alone, the table on its button
# px of splitter height under which a wide view too shows the figure alone (the table on its button): the 1280×720
# dock (~450 px) gave the table one visible row and the figure 284 px, its mean map 128 px
LOW_HEIGHT = 560
# px: a narrow view's figure is at least this tall (it scrolls): two titles, the caption and a mean map ~200 px
# square; the grid adds NARROW_ROW_PX a layer (in 221 px the grid was a strip and the map 40 px)
NARROW_FIGURE_PX, NARROW_ROW_PX = 470, 22
# a wide view's figure: the grid's title and head labels plus a row a layer (each layer's label drawn at 12 px),
# over the mean map's titles, map and position labels, and the caption
GRID_CHROME_PX, MEAN_MAP_PX, CAPTION_PX = 70, 380, 40
# the least a wide view's figure may have before it scrolls: 14 px a layer (12 px labels) and a mean map with its
# titles and position labels about 100 px square (the bundled models' few layers always fit)
LEAST_ROW_PX, LEAST_MEAN_PX = 14, 200
HEAD_PX = 32  # a head's column in the grid: its label ("H13") and its value ("0.00", 31 px with margins) at 12 px; at 30
# the coref grid's cells were 30.4 px and its numbers hidden in the 1920×1080 dock
GRID_LABELS_PX = 56  # the grid's layer labels ("L13") and margins, across (at 44 its cells lost their numbers)
BAR_PX = 90  # the grid's colour bar with its rotated words
# the mean map beside the grid whenever that gives it the larger side: under the grid of a 1920×1080 dock (600 ×
# 397 px) it was 104 × 110 px; beside it, ~245 px. Around the map (measured): its row labels, colour bar and the
# layout's margins across, its two-line title, column labels and the caption down; a grid over it is about
# STACKED_ROW_PX a layer with its title and head labels
MAP_CHROME_W, MAP_CHROME_H, STACKED_ROW_PX = 180, 150, 40
TITLE_COLUMN_PX = 280  # the grid's column beside the map, where the map leaves room: its title in two or three lines
SIDE_MAP_PX = 300  # the mean map's side beside the grid that the table makes room for
SCROLL_PX = 14  # the scroll area's vertical bar and frame, across (a 972-px view showed 958 px of its figure)
PAGE_HEADS = 4  # a page beside the mean map has at least these many heads (else the map goes under it)
MAX_CELL_LABELS = 64  # heads whose value is written in the grid (more would be unreadable; the bar says it then)


def figure_need(layers: int, row_px: int = NARROW_ROW_PX) -> tuple[int, int]:
    """(grid, mean map) heights in px a figure of ``layers`` layers needs to name every layer legibly."""
    return GRID_CHROME_PX + row_px * max(1, layers), MEAN_MAP_PX


def grid_width(layers: int, heads: int, paged: bool = False) -> int:
    """Px the head grid needs beside the mean map: its layer labels, a column a head, and its colour bar when its
    cells carry no numbers (more heads than MAX_CELL_LABELS, unless it is shown a page at a time, each number
    written)."""
    bar = BAR_PX if layers * heads > MAX_CELL_LABELS and not paged else 0
    return GRID_LABELS_PX + HEAD_PX * heads + bar


class DatasetSplit:
    """The figure's scroll area over ``below`` (the table over the top inputs) in one vertical splitter."""

    def __init__(self, canvas: QWidget, below: QSplitter, table: QTableWidget, button: QPushButton):
        self.canvas, self.below, self.table, self.button = canvas, below, table, button
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(canvas)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.scroll)
        self.splitter.addWidget(below)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        # Qt split by size hints (the figure's is large): 2 table rows at 1920×1080
        self.user_split = False
        for sp in (self.splitter, below):
            sp.splitterMoved.connect(self._split_by_user)
        self.width, self.layers, self.heads = 0, 1, 1
        self.side_by_side = False
        self.paged = False  # the grid a page at a time (dataset_pages.py), ``page_shape`` layers × heads a page
        self.page_shape = (1, 1)
        self.rows_adjust = 0  # layers a page under the map gets beyond the estimate, once measured (fit_page_rows)
        self.presented = False  # F5: the figure alone, the table and top inputs hidden (dataset_presented.py)
        # a page's layer and head in px: the docked ones, or presented those its numbers' larger type needs
        self.row_px, self.head_px = ROW_PX, HEAD_PX
        button.toggled.connect(self._button_toggled)

    def _split_by_user(self, *_args) -> None:
        self.user_split = True

    def _button_toggled(self, _on: bool) -> None:
        self.user_split = False
        self.arrange(self.width, self.layers, self.heads)

    @property
    def narrow(self) -> bool:
        """Whether the view is too narrow for the figure and the table one above the other."""
        return 0 < self.width < NARROW_WIDTH

    def arrange(self, width: int, layers: int, heads: int = 1, paged: bool = False) -> None:
        """Split for a view ``width`` px wide whose grid has ``layers`` rows and ``heads`` columns (``paged``: too
        many heads to write each one's number: shown a page at a time, see :meth:`_page`)."""
        self.width, self.layers, self.heads = width, max(1, layers), max(1, heads)
        self.paged = paged
        h = self.splitter.height()
        # the figure alone until the Table button asks for the table; presented, alone whatever was asked
        alone = self.presented or self.narrow or 0 < h < LOW_HEIGHT
        if paged and not self._page_side(width):
            alone = True  # a page over a legible mean map needs the height (600 × 676 at 1920×1080: 396 px left)
        self.button.setVisible(alone)
        below = 0 if self.presented or alone and not self.button.isChecked() else int(h * BELOW_SHARE)
        if self.user_split and not self.presented:
            below = self.splitter.sizes()[1]
        if paged:
            self._page(width, h, below, alone)
            self._split(h, self.page_below)
            return
        # the mean map beside the grid where that makes it larger (1280×720, ~970 × 280 px: under a 2-layer grid of
        # 900-px cells it was scrolled out of view; 1920×1080, 600 × 397: 110 px under the grid, ~240 beside it), and
        # only when both fit across (14 heads beside the map in a 600-px dock were 12 px each, every 2nd named)
        side = self._side_map(width, h - below)
        self.side_by_side = not self.narrow and side > 0 and side >= self._stacked_map(width, h - below)
        if self.side_by_side and not alone and not self.user_split:
            # the map beside the grid is as tall as the figure: the table gives up to a tenth of the height so the
            # map is as tall as it can be wide, up to SIDE_MAP_PX
            side = min(SIDE_MAP_PX, width - grid_width(self.layers, self.heads) - MAP_CHROME_W)
            below = max(min(below, h - side - MAP_CHROME_H), int(h * (BELOW_SHARE - 0.1)))
        # the width a height-bound map leaves goes to the grid's column, up to TITLE_COLUMN_PX: in a 2-head column
        # beside the 1280×720 dock's map, with ~380 px to spare, the grid's title took five lines
        self.grid_column = self._grid_column(grid_width(self.layers, self.heads), width, h - below)
        if self.narrow:
            self.canvas.setMinimumHeight(NARROW_FIGURE_PX + NARROW_ROW_PX * self.layers)
        else:  # scrolls, at the room a narrow view gives, only when its share cannot hold legible rows and map
            least = GRID_CHROME_PX + LEAST_ROW_PX * self.layers, LEAST_MEAN_PX
            need = figure_need(self.layers)
            fold = max if self.side_by_side else sum
            self.canvas.setMinimumHeight(fold(need) + CAPTION_PX if fold(least) + CAPTION_PX > h - below else 0)
        self._split(h, below)

    def _grid_column(self, grid_w: int, width: int, fig_h: int) -> int:
        """The grid's column beside the mean map: the width a height-bound map leaves, up to TITLE_COLUMN_PX docked;
        presented, all of it (at 1280×720 a 280-px column wrapped the grid's title on 3 lines over cells 105 × 235 px,
        and ~370 px stayed blank right of the map's bar; 30 × 9 at 1920×1080, ~750 px)."""
        across = width - grid_w - MAP_CHROME_W
        spare = across - max(0, min(across, fig_h - MAP_CHROME_H))
        return grid_w + max(0, spare if self.presented else min(spare, TITLE_COLUMN_PX - grid_w))

    def _split(self, h: int, below: int) -> None:
        """The splitter's sizes: ``below`` px for the table over the top inputs, the table the height of its rows."""
        if self.user_split:
            return
        self.splitter.setSizes([h - below, below])
        t = self.table
        rows = min(max(t.rowCount(), 1), TABLE_ROWS)
        want = t.horizontalHeader().sizeHint().height() + rows * t.verticalHeader().defaultSectionSize() \
            + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height()
        table_h = min(want, below * 2 // 3)
        self.below.setSizes([table_h, below - table_h])

    def _page_side(self, width: int) -> bool:
        """Whether a page of at least PAGE_HEADS heads fits beside a legible mean map."""
        across = width - SCROLL_PX - GRID_LABELS_PX - MAP_CHROME_W - MIN_MAP_PX
        return not self.narrow and across >= self.head_px * min(self.heads, PAGE_HEADS)

    def _page(self, width: int, h: int, below: int, alone: bool) -> None:
        """A page of the grid and the mean map both in the part seen without scrolling: the map MIN_MAP_PX or more
        beside the page where PAGE_HEADS heads fit beside it, else under it (the table then on its button)."""
        side = self.side_by_side = self._page_side(width)
        if side and not alone and not self.user_split:  # the table gives up to a tenth of the height to the map
            below = max(min(below, h - MIN_MAP_PX - MAP_CHROME_H), int(h * (BELOW_SHARE - 0.1)))
        self.page_below = below
        seen_h = max(h - below, NARROW_FIGURE_PX) if self.narrow else h - below
        rows, cols = page_fit(width - SCROLL_PX, seen_h - SCROLL_PX, side, labels_px=GRID_LABELS_PX,
                              head_px=self.head_px, chrome_px=GRID_CHROME_PX, caption_px=CAPTION_PX,
                              map_chrome_w=MAP_CHROME_W, row_px=self.row_px)
        rows = max(1, rows + (0 if side or self.narrow else self.rows_adjust))
        # (layers scroll a layer at a time: no even pages of them, as of heads)
        self.page_shape = rows, cols = min(self.layers, rows), even_page(self.heads, cols)
        self.grid_column = grid_width(rows, cols, True)
        if side and self.presented:  # (docked, a page's column is as wide as its heads need)
            self.grid_column = self._grid_column(self.grid_column, width - SCROLL_PX, seen_h - SCROLL_PX)
        # a narrow dock's figure still scrolls, at the height its page and map need (its 325 px seen hold no legible
        # map under a page: fitted to them, the map was 57 px)
        self.canvas.setMinimumHeight(NARROW_FIGURE_PX + NARROW_ROW_PX * rows if self.narrow else 0)

    def _side_map(self, width: int, fig_h: int) -> int:
        """The mean map's side beside the grid (0 where the grid and a legible map do not fit across)."""
        across = width - grid_width(self.layers, self.heads) - MAP_CHROME_W
        if across < LEAST_MEAN_PX:
            return 0
        return min(across, fig_h - MAP_CHROME_H)

    def _stacked_map(self, width: int, fig_h: int) -> int:
        """The mean map's side under the grid, at the height a narrow view's figure would scroll to at least."""
        grid_h = GRID_CHROME_PX + STACKED_ROW_PX * self.layers
        return min(width - MAP_CHROME_W, max(fig_h, NARROW_FIGURE_PX) - grid_h - MAP_CHROME_H)

    def place(self, figure, pattern, caption, layers: int, heads: int) -> None:
        """The mean map ``pattern`` under the grid (row 0, col 0 of ``figure``) or beside it, as :meth:`arrange`
        decided, the caption under both."""
        side = self.side_by_side
        if getattr(self, "_placed", None) != side:
            self._placed = side
            for item in (pattern, caption):
                figure.removeItem(item)
            figure.addItem(pattern, row=0 if side else 1, col=1 if side else 0)
            figure.addItem(caption, row=2, col=0, colspan=2 if side else 1)
        self.share(figure, side, layers, heads, getattr(self, "grid_column", None), self.paged)

    @staticmethod
    def share(figure, side: bool, layers: int, heads: int, grid_w: int | None = None, paged: bool = False) -> None:
        """The figure's rows and columns as the grid and the mean map need them: a fixed 2 : 5 of the height gave a
        30-layer grid 40 px (every 7th layer named) over a mean map with room to spare; beside it, the grid is as wide
        as its heads' labels need (14 heads in 2/5 of a 600-px dock were named every 2nd)."""
        lay = figure.layout
        # (a page under the map: its rows as tall as the page was fitted for, the map the rest)
        needs = (GRID_CHROME_PX + ROW_PX * layers, MIN_MAP_PX + PAGE_MAP_CHROME_H) if paged else figure_need(layers)
        for row, need in enumerate((1, 0) if side else needs):
            lay.setRowStretchFactor(row, need)
        # beside the map, the grid takes the width its heads need and the map the rest (in proportion, a 600-px
        # dock gave a 4-head grid 200 px and the map 246 px)
        least = grid_width(layers, heads, paged)
        # (a minimum, not a maximum: a column's maximum capped the whole layout's width, which kept it after the
        # map went back under the grid; the room for its title only preferred: as a minimum it made the figure's
        # minimum wider than a narrow dock)
        lay.setColumnMinimumWidth(0, least if side else 0)
        lay.setColumnPreferredWidth(0, max(least, grid_w or 0) if side else 0)
        for col, share in enumerate((1, 100) if side else (1, 0)):  # (a 0 stretch left the layout stuck narrow)
            lay.setColumnStretchFactor(col, share)
