"""A real model's head grid in the data-set view a page at a time, each head's number written in its cell, so the
mean map keeps its room beside (or under) it in the part seen without scrolling.

A 24-layer × 14-head grid in the 1280×720 dock (972 × 493 px) was drawn whole, 796 × 594 px without numbers, and the
mean map went under it, scrolled out of view at 170–190 px; a 32 × 32 grid could not go beside the map at all
(issue 36). Like All heads (all_heads_pages.py), a grid with more heads than can each carry a number shows as many
layers × heads as fit at a legible size: its layers scroll (the wheel, ▲▼) and its heads go a page at a time (◀▶),
following the selected head, while the mean map stays in view. The grid's view range is what is shown, so clicks,
hovers and the selection frame keep the heads' own indices.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QToolButton

from attnviz.gui.views.all_heads_pages import even_page, span_text

__all__ = ["GridPage", "PageControls", "page_fit", "ROW_PX", "MIN_MAP_PX", "PAGE_MAP_CHROME_H"]

# a layer's row when its cells carry their numbers: one 12-px line (15 px with its leading) and a little room
ROW_PX = 18
MIN_MAP_PX = 260  # the mean map's side a page leaves it, beside or under the grid (170–190 px was too small to read)
# above and below a mean map under the grid: its two-line title, its position labels, the caption (measured on the
# 600 × 676 dock at 1920×1080 with a three-line caption)
PAGE_MAP_CHROME_H = 120


def page_fit(seen_w: int, seen_h: int, side: bool, *, labels_px: int, head_px: int, chrome_px: int,
             caption_px: int, map_chrome_w: int, row_px: int = ROW_PX) -> tuple[int, int]:
    """(layers, heads) of a page that fits ``seen_w`` × ``seen_h`` with the mean map ``MIN_MAP_PX`` beside it
    (``side``) or under it: ``head_px`` a head, ``row_px`` a layer, ``labels_px`` of layer labels across and
    ``chrome_px`` of title and head labels down, the caption under both."""
    across = seen_w - labels_px - (map_chrome_w + MIN_MAP_PX if side else 0)
    # under the grid the map is as wide as the view lets it be (a narrow dock: ~80 px, not the 260 it has no room for)
    under = max(0, min(MIN_MAP_PX, seen_w - map_chrome_w)) + PAGE_MAP_CHROME_H
    down = seen_h - chrome_px - caption_px - (0 if side else under)
    return max(1, down // row_px), max(1, across // head_px)


class GridPage:
    """Which layers and heads of a ``layers`` × ``heads`` grid are on screen: a window of ``rows`` layers that scrolls
    (the wheel over the grid, a layer a notch; ▲▼ a window's height), and fixed pages of heads (head k on page
    k // cols, as All heads pages them), the last holding what is left."""

    def __init__(self):
        self.full = (0, 0)
        self.shape = (0, 0)  # (rows, cols) a page
        self.start = (0, 0)  # first layer and first head on screen

    @property
    def paged(self) -> bool:
        return self.shape != self.full

    def set_shape(self, full: tuple[int, int], fit: tuple[int, int]) -> bool:
        """A grid of ``full`` (layers, heads) shown at most ``fit`` at a time; True when what is shown changed."""
        L, H = full
        shape = (max(1, min(L, fit[0])), even_page(H, max(1, fit[1])))
        was = (self.full, self.shape, self.start)
        if full != self.full:
            self.start = (0, 0)  # another model's grid
        self.full, self.shape = full, shape
        self.start = self._clamp(*self.start)
        return was != (self.full, self.shape, self.start)

    def _clamp(self, l0: int, h0: int) -> tuple[int, int]:
        (L, H), (rows, cols) = self.full, self.shape
        return max(0, min(l0, L - rows)), max(0, min(h0, H - 1)) // cols * cols

    def ranges(self) -> tuple[range, range]:
        (L, H), (rows, cols), (l0, h0) = self.full, self.shape, self.start
        return range(l0, min(L, l0 + rows)), range(h0, min(H, h0 + cols))

    def turn(self, direction: str, layers: int | None = None) -> bool:
        """The next ("down", "right") or previous ("up", "left") layers or page of heads (``layers``: scroll by
        that many layers, not a window's height); True when it moved."""
        (rows, cols), (l0, h0) = self.shape, self.start
        step = rows if layers is None else layers
        was, self.start = self.start, self._clamp(l0 + {"down": step, "up": -step}.get(direction, 0),
                                                  h0 + {"right": cols, "left": -cols}.get(direction, 0))
        return was != self.start

    def follow(self, layer: int, head: int) -> bool:
        """Move so head (``layer``, ``head``) is shown; True when it moved."""
        layers, heads = self.ranges()
        if layer in layers and head in heads:
            return False
        l0 = self.start[0] if layer in layers else layer - self.shape[0] // 2  # the layer amid its neighbours
        was, self.start = self.start, self._clamp(l0, head if head not in heads else self.start[1])
        return was != self.start

    def can(self, direction: str) -> bool:
        (L, H), (rows, cols), (l0, h0) = self.full, self.shape, self.start
        return {"up": l0 > 0, "down": l0 + rows < L, "left": h0 > 0, "right": h0 + cols < H}[direction]

    def text(self) -> str:
        """"layers 0–11 of 24 · heads 0–13 of 32" (the dimensions not shown whole), "" when all are shown."""
        (L, H), (rows, cols) = self.full, self.shape
        layers, heads = self.ranges()
        return " · ".join(words for words, on in ((f"layers {span_text(layers)} of {L}", rows < L),
                                                  (f"heads {span_text(heads)} of {H}", cols < H)) if on)

    def view_rect(self) -> QRectF:
        """The grid's view range: the page's cells, a last page of heads the size of every page's (its cells not
        wider)."""
        (rows, cols), (l0, h0) = self.shape, self.start
        return QRectF(h0, l0, cols, rows)


class PageControls:
    """▲▼◀▶ in the view's controls row, shown only when the grid is paged. (The page's words are in the figure's
    caption and its axes: beside the buttons they wrapped the 1280×720 dock's row onto a second line, 31 px the mean
    map lost.)"""

    ARROWS = {"up": ("▲", "layers above (or turn the wheel over the grid)"), "down": ("▼", "layers below"),
              "left": ("◀", "previous heads"), "right": ("▶", "next heads")}

    def __init__(self, row, turn):
        self.buttons = {}
        for key, (arrow, tip) in self.ARROWS.items():
            b = QToolButton(text=arrow)
            b.setToolTip(f"show the {tip} (the grid shows a page of heads large enough to write each one's number)")
            b.clicked.connect(lambda _c=False, k=key: turn(k))
            b.hide()
            self.buttons[key] = b
        for b in self.buttons.values():
            row.add(b)

    def show(self, page: GridPage) -> None:
        (L, H), (rows, cols) = page.full, page.shape
        for key, b in self.buttons.items():
            b.setVisible(rows < L if key in ("up", "down") else cols < H)
            b.setEnabled(page.can(key))


class PagedGrid:
    """Mixed into DatasetView: its grid (``grid``, ``_cell_labels``, ``caption``) shown a page at a time."""

    def _build_pages(self, row) -> None:
        self.page = GridPage()
        self._page_controls = PageControls(row, self.turn_page)
        self._cells = None  # (values, lo, hi) of the grid drawn: the page's cells get their numbers
        self._caption_words = ""
        self.grid.vb.setMouseEnabled(False, False)  # a wheel zoomed the page out of its range
        self.grid.vb.wheelEvent = self._grid_wheel

    def set_page_shape(self, full: tuple[int, int], shape: tuple[int, int]) -> None:
        """The grid ``full`` (layers, heads) shown ``shape`` a page; drawn again when its page changed."""
        if self.page.set_shape(full, shape) and self._cells is not None:
            self._apply_page()

    def clear_page(self) -> None:
        """No grid drawn: no page buttons."""
        self._cells = None
        self._page_controls.show(GridPage())

    def turn_page(self, direction: str) -> None:
        """Show the next page of layers ("down"), heads ("right"), or the previous ones."""
        if self.page.turn(direction):
            self._apply_page()

    def _grid_wheel(self, ev, axis=None) -> None:
        """The wheel over a grid with more layers than shown scrolls its layers, a layer a notch (the mean map
        beside it stays); past its first or last layer, or elsewhere, the figure's scroll area takes it."""
        notches = ev.delta() / 120
        if notches and self.page.turn("up" if notches > 0 else "down", max(1, round(abs(notches)))):
            ev.accept()
            self._apply_page()
        else:  # all layers shown, or the first or last already: a narrow dock's figure scrolls on
            ev.ignore()

    def follow_page(self, layer: int, head: int) -> None:
        """The page holding the selected head (clicked in another view, or a table row)."""
        if self.page.follow(layer, head):
            self._apply_page()

    def write_cells(self, values, lo: float, hi: float, caption: str) -> None:
        """The grid's ``values`` on the scale ``lo``–``hi``: the page's numbers in their cells, the page named in
        ``caption`` (a file cannot be paged: its caption says which layers and heads it shows)."""
        self._cells, self._caption_words = (values, lo, hi), caption
        self._apply_page()

    def _apply_page(self) -> None:
        if self._cells is None or self.page.full != self._cells[0].shape:
            return
        values, lo, hi = self._cells
        page = self.page
        self.grid.vb.setRange(page.view_rect(), padding=0)
        self._cell_labels.set(values, lo, hi, self.style, page.ranges() if page.paged else None)
        self._page_controls.show(page)
        words = page.text()
        self._set_caption(" · ".join(w for w in (self._caption_words, f"this grid: {words}" if words else "") if w))
