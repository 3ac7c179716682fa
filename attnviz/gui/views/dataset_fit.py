"""What keeps the data-set view's figure legible once laid out: colour bars (and a mean map beside a tall grid) inside
the part seen without scrolling, and a head grid whose columns never shrink below a label's line (the figure scrolls
sideways instead).

A bar is as tall as its map's row, and its rotated words are centred on it: a real model's 30-layer grid (642 px)
and the mean map beside it (a 619-px row for a 379-px map) put the words' middle below the scroll area's bottom, so
they read "ean weight / n maximum" at 1280×720 and "core / 1" at 1920×1080 (issue 36). Each bar is held to the
height seen from the figure's top, at the top of its row, so its ends, ticks and words are all on screen at once; the
grid's cells below it keep their colours, read against the same bar.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from attnviz.gui.views.dataset_pages import MIN_MAP_PX
from attnviz.gui.widgets.square_cells import UNLIMITED

__all__ = ["fit_view", "fit_on_layout", "FitsOnScreen", "release", "fit_pattern", "LEAST_BAR_PX", "BAR_MARGIN_PX",
           "LEAST_HEAD_PX"]

LEAST_BAR_PX = 160  # a bar never shorter: its two ends and a tick between, and words wrapped onto a few lines
BAR_MARGIN_PX = 6  # kept between a bar's end and the scroll area's edge (its end label is half a line lower)
# a head's column at least one line of its label's 12-px font (13.95 px × the axis' 0.92 packing), the label turned
# upright: 32 heads in a 600-px dock get 13.25 px; narrower, the figure scrolls sideways rather than shrink them
LEAST_HEAD_PX = 13
MAX_ROWS_ADJUST = 4  # layers a measured page may differ from the estimate (a bound: no back and forth for ever)
PAGE_ROW_SLACK_PX = 2  # a page's grid row beyond its rows and what is around them, so a rounding never cuts a row


def fit_bars(view) -> None:
    """Hold the grid's and the mean map's colour bars of DatasetView ``view`` to what is seen without scrolling: from
    a bar's top down to the seen part's bottom, at least LEAST_BAR_PX. (Not to a square map's matrix: the bar's words
    wrap onto more lines when it is shorter, it grows wider, the matrix narrower and so shorter — a 2-layer model's
    mean map spiralled from 70 px to 57.)"""
    canvas = view.canvas
    seen_h = view.split.scroll.viewport().height()
    if seen_h <= 0:
        return
    for heatmap in (view.grid, view.pattern):
        top = canvas.mapFromScene(heatmap.vb.sceneBoundingRect().topLeft()).y()  # the bar's top is the matrix row's
        # a bar further down (the mean map's, under a tall grid) is seen once scrolled to: the whole part seen, not the
        # least (its 170-px map had a 161-px bar)
        room = max(float(LEAST_BAR_PX), (seen_h - top if top < seen_h else seen_h - BAR_MARGIN_PX) - BAR_MARGIN_PX)
        bar = heatmap.bar
        most = room if room < heatmap.vb.height() - 1 else UNLIMITED  # a bar that fits keeps its row's height
        if abs(bar.maximumHeight() - most) > 2:
            bar.setMaximumHeight(most)
            heatmap.layout.setAlignment(bar, Qt.AlignmentFlag.AlignTop)


def fit_columns(view) -> None:
    """The figure at least as wide as the grid's layer labels, LEAST_HEAD_PX a head and its colour bar need, when the
    grid is under the mean map (beside it, :class:`DatasetSplit` gives it room for its labels and numbers)."""
    grid, heads = view.grid, view.grid.image.shape_rc[1]
    if grid.vb.width() <= 0:
        return
    # what is not the grid's cells (layer labels, colour bar, the layouts' margins: 54 px more than the labels and
    # bar) keeps its width; the cells get LEAST_HEAD_PX a head
    need = int(view.canvas.width() - grid.vb.width() + LEAST_HEAD_PX * heads + 1)
    seen_w = view.split.scroll.viewport().width()
    # (a page of a larger grid fits across by construction: dataset_pages.py)
    least = need if heads and not view.split.side_by_side and not view.split.paged and need > seen_w else 0
    if view.canvas.minimumWidth() != least and seen_w > 0:
        view.canvas.setMinimumWidth(least)


def fit_pattern(view) -> None:
    """Beside a grid taller than the part seen (30 layers at 1280×720: a 770-px figure in 434 px), the mean map no
    taller than that part: as tall as the grid's row, its last 5 rows were cut off at the scroll area's bottom."""
    pattern, seen_h = view.pattern, view.split.scroll.viewport().height()
    top = view.canvas.mapFromScene(pattern.sceneBoundingRect().topLeft()).y()
    most = seen_h - top if view.split.side_by_side and view.canvas.height() > seen_h > top else UNLIMITED
    if abs(pattern.maximumHeight() - most) > 2:
        pattern.setMaximumHeight(most)
        view.figure.layout.setAlignment(pattern, Qt.AlignmentFlag.AlignTop)


def fit_page_row(view) -> None:
    """A page of the grid over the mean map: the grid's row held to the height of its page's rows (ROW_PX each;
    presented, ``split.row_px``) and what its last layout put around them, the map the rest. In proportion to the
    rows' stretch the page's row took 45 px more than its rows and the map lost them (246 px); a title wrapped onto
    two lines in a narrow dock left 15-px rows, too low for their numbers. Measured after each layout, so it settles on
    the titles' real heights."""
    lay, grid = view.figure.layout, view.grid
    least, most = 0, UNLIMITED
    if view.split.paged and not view.split.side_by_side and grid.vb.height() > 0:
        rows_px = view.split.row_px * view.page.shape[0]  # (presented, rows as tall as their numbers' type)
        least = most = round(grid.height() - grid.vb.height() + rows_px + PAGE_ROW_SLACK_PX)
    if abs(lay.rowMaximumHeight(0) - most) > 1 or abs(lay.rowMinimumHeight(0) - least) > 1:
        lay.setRowMinimumHeight(0, least)
        lay.setRowMaximumHeight(0, most)


def fit_page_rows(view) -> bool:
    """A page under the mean map gets a layer more, or less, once the map is measured: the titles and the caption
    take a line more or less than estimated (30 × 9 at 1920×1080: 3 layers over a 281-px map; 32 × 32, a caption a
    line longer: 4 over 249 px). True when the page changed. The map's MIN_MAP_PX to MIN_MAP_PX + a row is left
    alone, so a change never undoes the last."""
    split = view.split
    if not split.paged or split.side_by_side or split.narrow or view.pattern.image.shape_rc == (1, 1):
        return False  # (nor while the map is the empty 1 × 1 placeholder: it stepped the page down to one layer)
    # the map's side from its view box, laid out at once, not from the image's scene rectangle: that follows the
    # box's range only at the next paint, and measured there a page stepped on a stale 2,234-px "side"
    box = view.canvas.mapFromScene(view.pattern.vb.sceneBoundingRect()).boundingRect()
    side = min(box.width(), box.height()) if view.pattern.image.shape_rc[0] == view.pattern.image.shape_rc[1] \
        else view.canvas.mapFromScene(view.pattern.image.sceneBoundingRect()).boundingRect().height()
    if side <= 1 or side == getattr(split, "stepped_at", None):  # (1 px: not laid out yet)
        return False  # the layout for the last step is still to come (measured again, the same map stepped to 1 layer)
    rows, layers = split.page_shape[0], split.layers
    step = -1 if side < MIN_MAP_PX and rows > 1 else 1 if side >= MIN_MAP_PX + split.row_px + 4 and rows < layers else 0
    if not step or abs(split.rows_adjust + step) > MAX_ROWS_ADJUST:
        return False
    split.rows_adjust, split.stepped_at = split.rows_adjust + step, side
    view.split_below()
    fit_page_row(view)  # (split_below's own fitting is skipped inside this one) the row for the new page
    return True


def release(view) -> None:
    """Undo the fitting: a file shows the whole figure, and bars and a mean map held to the screen's scroll area
    drew short there (the screen's 434 px in a 650-px page)."""
    for item in (view.grid.bar, view.pattern.bar, view.pattern):
        item.setMaximumHeight(UNLIMITED)
    view.figure.layout.setRowMinimumHeight(0, 0)  # a page's row too: a 1080-px file kept the screen's 151 px
    view.figure.layout.setRowMaximumHeight(0, UNLIMITED)


class FitsOnScreen:
    """Mixed into DatasetView: its figure drawn for a file without the on-screen fitting, fitted again after."""

    def render_figure(self, painter, rect, scale: float = 1.0) -> None:
        self._fitting = True  # (the figure laid out for the file resizes the maps: no fitting meanwhile)
        try:
            release(self)
            super().render_figure(painter, rect, scale)
        finally:
            self._fitting = False
            fit_view(self)


def fit_view(view) -> None:
    """Fit ``view``'s bars and columns to the scroll area (called after every layout change of its maps)."""
    if getattr(view, "_fitting", False):
        # a map resized while fitting: the heatmaps lay themselves out at once when their shape changes, so the
        # new page's layout (and the resize that asks for its measure) came inside this call and was lost
        view._fit_again = True
        return
    view._fitting = True
    try:
        for _ in range(2 * MAX_ROWS_ADJUST + 2):  # bounded: each pass follows a layout this one caused
            view._fit_again = False
            fit_page_row(view)
            if not fit_page_rows(view):
                fit_pattern(view)
                fit_bars(view)
                fit_columns(view)
            if not view._fit_again:
                return
    finally:
        view._fitting = False


def fit_on_layout(view) -> None:
    """Fit ``view`` again whenever its maps are resized or the scroll area's seen part changes (a sideways scroll
    bar appearing took 14 px of height from under a bar already fitted: its end was cut)."""
    for vb in (view.grid.vb, view.pattern.vb):
        vb.sigResized.connect(lambda *_: fit_view(view))
    for scroll_bar in (view.split.scroll.horizontalScrollBar(), view.split.scroll.verticalScrollBar()):
        scroll_bar.rangeChanged.connect(lambda *_: fit_view(view))
