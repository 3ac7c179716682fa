"""The rollout view's image panels: input, raw attention, rollout, gradient rollout, two by two, and their captions.

Each cell holds a caption (row 0), the picture's ViewBox (row 1, column 0) and a colour bar (row 1,
column 1). The maps are square-pixelled, so their size follows the height; on a wide figure (a 16:9
slide) equal half-width cells left each pair of maps far apart, with a wide empty band between the
columns. :meth:`PanelGrid.centre` caps each cell at the width its map, bar and caption need; two empty
gutter columns on the outside take the rest, so the four panels stay together in the middle. (Margins on the grid
did the same on screen but raised the figure's minimum width with them: a dock could no longer shrink.)
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsWidget, QSizePolicy

from attnviz.gui.views.rollout_arrangement import LAYOUTS, MAP_SLACK, ONE_BAR, choose, estimates
from attnviz.gui.widgets.square_cells import UNLIMITED
from attnviz.gui.widgets.title import make_title

__all__ = ["PanelGrid", "fit_pictures", "panel_cell", "patch_caption", "predicted_label", "trained_line", "two_lines"]


def _natural_width(label) -> float:
    """Width of a caption's longest line, unwrapped (its current width may already be a wrapped one)."""
    doc = label.item.document().clone()
    doc.setTextWidth(-1)
    return float(doc.idealWidth())


class PanelGrid(pg.GraphicsLayout):
    """The four image panels, two by two in equal cells that take the view's height, or in one row (an export
    whose height bounds two rows: the view picks, and then leaves out the bars it does not draw, which took half
    of every cell of a row)."""

    def __init__(self):
        super().__init__()
        self.cells: list[pg.GraphicsLayout] = []
        self.arrangement = "grid"
        self.places = LAYOUTS["grid"]  # (row, column, rows spanned) of each cell
        self.input_cap = UNLIMITED  # the input picture's width when it is drawn larger than the maps
        self._bar_own: dict[int, tuple] = {}  # each map bar's maximum height and alignment before a row or "beside" limited it
        self.cols, self.n_rows = 2, 2  # (GraphicsLayout keeps its own dict in .rows)
        self.image_size: tuple[int, int] | None = None  # (rows, columns) of the picture in pixels
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.layout.setContentsMargins(0, 0, 0, 0)  # the figure's own margins frame it already
        self.gutters = []
        for col in (0, self.cols + 1):
            gutter = QGraphicsWidget()
            gutter.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            gutter.setMinimumWidth(0)
            gutter.setPreferredWidth(0)
            self.addItem(gutter, row=0, col=col)
            # a gutter takes a hundredth of what the cells take until they reach their cap, then the rest
            # (a stretch of 0 would make Qt never grow the gutter past its preferred 0 px)
            self.layout.setColumnStretchFactor(col, 1)
            self.gutters.append(gutter)
        self.geometryChanged.connect(self.centre)

    def _place(self, i: int, cell) -> None:
        # columns 1..cols hold the cells; an empty column on either side takes the width capped cells
        # leave, so the grid itself never gets a maximum width (the figure would shrink to it)
        row, col, span = self.places[i]
        self.addItem(cell, row=row, col=1 + col, rowspan=span)

    def add_cell(self, cell: pg.GraphicsLayout) -> None:
        self.cells.append(cell)
        self._place(len(self.cells) - 1, cell)
        self._stretch()
        # captions and bars settle a layout pass after the grid: measure again then
        for item in (cell.getItem(0, 0), cell.getItem(1, 0), cell.getItem(1, 1)):
            if item is not None:
                item.geometryChanged.connect(self.centre)

    def set_arrangement(self, name: str) -> bool:
        """Lay the cells out as ``LAYOUTS[name]``; True when that changed."""
        if name == self.arrangement:
            return False
        for item in [*self.cells, self.gutters[1]]:
            self.removeItem(item)
        self.arrangement, self.places = name, LAYOUTS[name]
        self.cols = 1 + max(col for _, col, _ in self.places)
        self.n_rows = max(row + span for row, _, span in self.places)
        for i, cell in enumerate(self.cells):
            self._place(i, cell)
        self.addItem(self.gutters[1], row=0, col=self.cols + 1)
        self._stretch()
        return True

    def one_bar(self) -> str:
        """The map whose bar is drawn on one colour scale (rollout_arrangement.ONE_BAR)."""
        return ONE_BAR[self.arrangement]

    def arrange(self, bars, per_map: bool, settle) -> None:
        """The arrangement that draws the largest maps and fills the room (rollout_arrangement.choose): on a 16:9
        slide the input large beside the maps (one row left a third of the page blank), in a wide dock one row
        (two by two drew 126-px maps in a 950 × 350 px dock). In a row the bars that are not drawn leave their
        cells (each took a bar's width, half of a cell). ``bars``: each cell's bar (the input's invisible spacer
        first, then raw's, rollout's, grad's); ``per_map``: every map draws its bar (else the one of ``one_bar()``);
        ``settle()`` lays the figure out."""
        size, maps = self.image_size, bars[1:]
        name, found = "grid", None
        if size is not None and self.width() > 0:
            w, h = self.width(), self.height()
            captions = [cell.getItem(0, 0).geometry().height() + 4 for cell in self.cells]
            bar = max(b.width_at(h / 2) for b in maps) + 4
            found = {e.name: e for e in estimates(w, h, size[1] / size[0], captions[0], max(captions[1:]), bar,
                                                  per_map, self.layout.horizontalSpacing())}
            name = choose(list(found.values()))
        self._apply(name, found, bars, per_map, settle)
        if name != "grid" and self._map_side() < MAP_SLACK * found[name].map_side:
            # the captions, rewrapped in the new columns, took the maps' room (large type in a dock: four-line
            # captions left raw attention and rollout no height at all): two by two, as before the rule
            self._apply("grid", found, bars, per_map, settle)

    def _apply(self, name: str, found, bars, per_map: bool, settle) -> None:
        """Lay the panels out as ``name`` (``found``: the estimates by name, or None)."""
        maps, tall, pad = bars[1:], UNLIMITED, 0.0
        self.input_cap = UNLIMITED
        if name == "beside":  # the input no wider than estimated: the columns then leave the maps their height
            self.input_cap = found[name].input_side * self.image_size[1] / self.image_size[0]
        elif name == "row":
            # each cell as tall as its caption and picture (the bar as tall as the maps), the row in the middle
            caption = max(cell.getItem(0, 0).geometry().height() + 4 for cell in self.cells)
            tall = caption + found[name].map_side
            pad = max(0.0, (self.height() - tall) / 2)
        self.set_arrangement(name)
        for bar, map_name in zip(maps, ("raw", "rollout", "grad")):
            bar.setVisible(per_map or map_name == self.one_bar())
        self.layout.setContentsMargins(0, pad, 0, 0)
        for cell in self.cells:
            cell.setMaximumHeight(tall)
            # caps measured again from unwrapped captions: the last arrangement's narrow caps wrapped them taller,
            # and caps measured under taller captions came out narrower still (85-px maps fell to 63)
            cell.setMaximumWidth(UNLIMITED)
            self.layout.setAlignment(cell, Qt.AlignmentFlag.AlignTop)  # the pictures on one line
            cell.layout.setRowMinimumHeight(0, 0)
        self.seat_bars(bars)
        if name != "grid":  # the captions of a row as tall as its tallest caption: its pictures start on one line
            self._even_captions(settle)
        else:
            settle()
            self.settle(settle)

    def _map_side(self) -> float:
        """The maps' pictures' height as laid out now (0 before there is a picture)."""
        boxes = [cell.getItem(1, 0) for cell in self.cells[1:]]
        if self.image_size is None:
            return 0.0
        rows, cols = self.image_size
        return max(0.0, min(min(vb.width() / cols, vb.height() / rows) for vb in boxes)) * rows

    def _even_captions(self, settle) -> None:
        """Each row's captions as tall as its tallest, measured again until the widths they wrap at settle (measured
        once, a caption wrapped in a cell not yet widened kept three lines' height: 70 px between the captions and
        the maps of a presented slide, and the maps' columns, capped from the pictures' height, drew them smaller)."""
        last = None
        for _ in range(4):
            settle()
            self.settle(settle)
            needs = []
            for row in range(self.n_rows):
                here = [cell for cell, (r, _, _) in zip(self.cells, self.places) if r == row]
                need = max(cell.getItem(0, 0).item.boundingRect().height() for cell in here)
                needs.append(need)
                for cell in here:
                    cell.layout.setRowMinimumHeight(0, need)
            if needs == last:
                return
            last = needs

    def seat_bars(self, bars) -> bool:
        """A bar (``bars``: each cell's, the input's invisible spacer first) keeps its place in its cell while a bar
        is drawn in the same column, so that column's pictures stay aligned; a column that draws none gives the
        width up (two by two on one scale, the hidden bars of the input and rollout stood between the columns as a
        wide gap; in a row, each hidden bar took half of its cell). True when a bar moved."""
        moved = False
        cols = [col for _, col, _ in self.places]
        for cell, bar, col in zip(self.cells, bars, cols):
            column = [b for b, c in zip(bars, cols) if c == col]
            keep, inside = any(b.isVisible() for b in column), cell.getItem(1, 1) is bar
            if keep != inside:
                cell.addItem(bar, row=1, col=1) if keep else cell.removeItem(bar)
                moved = True
        return moved

    def settle(self, activate_figure) -> None:
        """Lay the panels out until their width caps settle: the caps that keep the four panels together are
        measured from the settled captions and bars (in one or two rounds). ``activate_figure()``: the figure's."""
        def activate():
            activate_figure()
            self.layout.activate()
            for cell in self.cells:
                cell.layout.activate()

        activate()
        cap = None
        for _ in range(4):
            if cap == (cap := self.centre()):
                break
            activate()

    def hug_bars(self, bars) -> None:
        """In one row, each map's drawn bar (``bars``: the maps', in order) as tall as the pictures, not as the cell (the
        row's height was estimated with less spacing than the layout gives, and the pictures, bound by their width,
        came out shorter)."""
        boxes = [cell.getItem(1, 0) for cell in self.cells[1:]]  # the maps' (the input may be larger)
        if self.image_size is None or any(vb.width() <= 0 or vb.height() <= 0 for vb in boxes):
            return
        picture = self._map_side()
        hug = self.arrangement != "grid"
        for cell, bar in zip(self.cells[1:], bars):
            # two by two gives the bars back their own height limit and alignment, untouched when they have them:
            # set again (unlimited, pinned to the top), a dock in large type drew its maps at 63 px, not 85
            own = self._bar_own.setdefault(id(bar), (bar.maximumHeight(), cell.layout.alignment(bar)))
            if hug:
                bar.setMaximumHeight(picture)
                cell.layout.setAlignment(bar, Qt.AlignmentFlag.AlignTop)
                cell.layout.activate()
            elif (bar.maximumHeight(), cell.layout.alignment(bar)) != own:
                bar.setMaximumHeight(own[0])
                cell.layout.setAlignment(bar, own[1])
        if self.arrangement == "row":
            # the row centred on the pictures it drew: centred on its estimate (which leaves out the spacing),
            # a slide had 200 px blank above the row and 280 px below
            caption = self.cells[0].layout.rowMinimumHeight(0) + self.cells[0].layout.verticalSpacing()
            _, top, _, _ = self.layout.getContentsMargins()
            pad = max(0.0, (self.height() - caption - picture) / 2)
            if abs(pad - top) > 1.0:
                self.layout.setContentsMargins(0, pad, 0, 0)
                self.layout.activate()

    def _stretch(self) -> None:
        for k in range(1, 6):  # equal cells, the gutters beside them; a column left empty takes nothing
            self.layout.setColumnStretchFactor(k, 100 if k <= self.cols else int(k == self.cols + 1))
        for k in range(4):  # unused rows take nothing
            self.layout.setRowStretchFactor(k, 1 if k < self.n_rows else 0)

    def set_image_size(self, size: tuple[int, int]) -> None:
        self.image_size = (int(size[0]), int(size[1]))
        self.centre()

    def centre(self, *_args) -> float:
        """Cap every cell at the width its column's maps (as tall as the cell allows), bars and captions need.

        Computed from this grid's own size and the cells' heights (never from their capped widths), so a
        second call changes nothing. Returns the cap in pixels (0: none)."""
        lay = self.layout
        if self.image_size is None or not self.cells:
            return 0.0
        rect = self.geometry()
        rows, gap = self.n_rows, lay.verticalSpacing()
        _, top, _, bottom = lay.getContentsMargins()
        row_h = (rect.height() - top - bottom - gap * (rows - 1)) / rows
        widths = []
        for cell, (_, _, span) in zip(self.cells, self.places):
            cell_h = row_h * span + gap * (span - 1)
            label, bar = cell.getItem(0, 0), cell.getItem(1, 1)
            cl, ct, cr, cb = cell.layout.getContentsMargins()
            label_h = label.geometry().height() if label is not None else 0.0
            img_h = max(0.0, cell_h - label_h - cell.layout.verticalSpacing() - ct - cb)
            vb = cell.getItem(1, 0)
            if vb is not None and 0 < vb.height() < img_h:
                # laid out, the picture's box is shorter than the estimate (by the rows' spacing): its spare width
                # stood beside the maps' pictures as a gap between the columns. Its height never follows the cap.
                img_h = vb.height()
            img_w = img_h * self.image_size[1] / self.image_size[0]
            if cell is self.cells[0]:
                img_w = min(img_w, self.input_cap)
            # the spacing before the bar's column stays without a bar (the caption spans both columns): left out,
            # the maps' boxes of a slide's "beside" were 6 px narrower than tall and drew the maps 6 px smaller
            bar_w = (bar.geometry().width() if bar is not None else 0.0) + cell.layout.horizontalSpacing()
            caption = _natural_width(label) if label is not None else 0.0
            widths.append(cl + cr + max(img_w + bar_w, caption) + 1.0)  # 1 px: rounding in the layout
        # each column at its own cap: one cap for all let the input's wide caption widen the maps' column too, and
        # its spare width stood left of the maps' pictures as a gap between the columns
        cols = [col for _, col, _ in self.places]
        caps = [max(wd for wd, c in zip(widths, cols) if c == col) for col in range(self.cols)]
        for cell, col in zip(self.cells, cols):
            if abs(cell.maximumWidth() - caps[col]) > 1.0:
                cell.setMaximumWidth(caps[col])
        return max(caps)


def two_lines(note: str) -> str:
    """"rollout (mean, residual 0.50, from layer 0)" → name over details: three panels side by side
    must fit a dock half the window wide, and one-line captions made the figure ~900 px wide."""
    name, sep, rest = note.partition(" (")
    return f"{name}<br>{rest.rstrip(')')}" if sep else note


def patch_caption(trace, image_hw: tuple[int, int]) -> str:
    """ "32 × 32 pixels<br>a 4 × 4 grid of patches, each 8 × 8 pixels" — the grid and the patch size said apart
    ("4×4 patches", and then "a 4×4 grid of 8-pixel patches", read as 4-pixel patches); the patch side is the
    model's, else the image side over the grid."""
    (h, w), (gh, gw) = image_hw, trace.grid
    size = trace.description.config.get("patch_size")
    ph, pw = (size, size) if size else (h // gh if gh else 0, w // gw if gw else 0)
    return f"{w} × {h} pixels<br>a {gh} × {gw} grid of patches, each {pw} × {ph} pixels"


def predicted_label(trace) -> str | None:
    """The class the image model says (its labels and prediction), or None."""
    labels = list(trace.description.labels or ())
    if not labels or "prediction" not in trace:
        return None
    return labels[int(np.argmax(np.asarray(trace["prediction"])))]


def trained_line(trace) -> str | None:
    """ "3-layer vision transformer trained on 5 classes (circle, …, star), classifying from [CLS]: it says star" —
    what was trained and what the maps explain (the slide said only "Where does [CLS] get its information?").
    None without labels."""
    d = trace.description
    labels = list(d.labels or ())
    if not labels:
        return None
    names = ", ".join(labels) if len(labels) <= 6 else f"{labels[0]}–{labels[-1]}"
    said = predicted_label(trace)
    return (f"{d.n_layers}-layer vision transformer trained on {len(labels)} classes ({names}), classifying from "
            f"[CLS]" + (f": it says {said}" if said else ""))


def fit_pictures(boxes, size) -> None:
    """Square pixels, each image right under its caption and against the right edge, next to its colour bar
    (an aspect-locked view centred it, far from caption and bar in a tall dock). All pictures at the scale of the
    smallest panel: the input's panel, without a real bar, is wider in a narrow dock and drew the picture larger
    than the maps it is compared with. ``size``: the image's (rows, cols), or None before there is one."""
    if size is None or any(vb.width() <= 0 or vb.height() <= 0 for vb in boxes):
        return
    rows, cols = size
    px = min(min(vb.width() / cols, vb.height() / rows) for vb in boxes)  # screen pixels per image pixel
    for vb in boxes:
        span_x = vb.width() / px
        x0 = -(span_x - cols)
        vb.setRange(xRange=(x0, x0 + span_x), yRange=(0, vb.height() / px), padding=0, disableAutoRange=True)


def panel_cell(on_resized):
    """(cell, caption, ViewBox, picture) of one panel: the caption in row 0, the picture's ViewBox in row 1, column 0;
    column 1 is left for its colour bar. ``on_resized(vb)`` runs when the ViewBox changes size."""
    cell = pg.GraphicsLayout()
    label = make_title()
    vb = pg.ViewBox(invertY=True, enableMenu=False)
    vb.setMouseEnabled(False, False)
    vb.sigResized.connect(on_resized)
    picture = pg.ImageItem(axisOrder="row-major")
    vb.addItem(picture)
    cell.addItem(label, row=0, col=0, colspan=2)
    cell.addItem(vb, row=1, col=0)
    cell.layout.setRowStretchFactor(1, 1)
    # no margins inside a cell (pyqtgraph's 9 px on every side): the grid's spacing keeps the cells
    # apart, and the margins took 18 px of every row's height from a map ~100 px tall at 1280×720
    cell.layout.setContentsMargins(0, 0, 0, 0)
    cell.layout.setVerticalSpacing(2)
    return cell, label, vb, picture
