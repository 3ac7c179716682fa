"""The All heads grid's pages and fitting: how many layers × heads fit at a legible size, which page is on
screen (▲▼◀▶, following the selection), and the notes' font and the grid's width for the view's size.

A mixin of :class:`~attnviz.gui.views.model_view.ModelView` (its items: ``vb``, ``grid``, ``notes``, the axes,
``marks``, ``page_buttons``, ``spare``), kept apart so the view file holds the data flow and interaction.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF

from attnviz.gui.views.grid_notes import DOC_MARGIN
from attnviz.gui.widgets.legible import is_exporting

__all__ = ["GridPages", "even_page", "PITCH_X", "PITCH_Y", "MIN_TILE_PX", "NOTE_Y", "NOTE_MIN_PT"]


PITCH_X, PITCH_Y = 1.12, 1.42  # tile pitch in tile units; the extra height holds the annotation
# a tile is never drawn smaller than this (px): a real model's 30 × 9 or 32 × 32 heads are shown a page of
# layers and heads at a time (▲▼◀▶) rather than as a column of 20-px thumbnails with overlapping numbers
MIN_TILE_PX = 44.0
NOTE_Y = 1.06  # a note's anchor under its tile's top, in tile units (under the selection frame)
NOTE_FACTOR = 0.8  # the notes' font, of the style's, docked and on every page of a paged grid
NOTE_MIN_PT = 9.0  # the notes' smallest font (12 px on a 96-dpi screen); a page has tiles wide enough for it


def span_text(shown: range) -> str:
    """"30–31", or "31" for a page of one."""
    return f"{shown.start}–{shown.stop - 1}" if len(shown) > 1 else f"{shown.start}"


def _spans(every: range, shown: range) -> str:
    """The indices of ``every`` not in ``shown`` (a contiguous page) as "0–4 and 10–29"."""
    spans = [(every.start, shown.start - 1), (shown.stop, every.stop - 1)]
    return " and ".join(f"{a}–{b}" if b > a else f"{a}" for a, b in spans if b >= a)


def even_page(n: int, fit: int) -> int:
    """A page size of at most ``fit`` for ``n`` layers or heads on fixed pages (k on page k // size): the fewest
    pages whose last is at least two-thirds full, then the most even size for that many. F5 at 32 heads fitting
    10 a page ended on H30–H31 alone in a slide's corner (now four pages of 8), and 32 layers fitting 6 on
    L30–L31 alone (now eight of 4); 14 heads fitting 8 give 7 + 7. The fullest last page when none is."""
    if n <= fit:
        return n
    pages = lambda p: -(-n // p)  # noqa: E731
    last = lambda p: (n - (pages(p) - 1) * p) / p  # noqa: E731 - the last page's share of a full one
    sizes = range(max(1, -(-fit // 2)), fit + 1)
    good = [p for p in sizes if last(p) >= 2 / 3]
    if not good:
        return max(sizes, key=lambda p: (last(p), p))
    return min(good, key=lambda p: (pages(p), p))


class GridPages:
    """Pages of the All heads grid and the fitting of its notes (mixed into ModelView)."""

    # -- pages of a large grid ---------------------------------------------------------------------
    def page_shape(self) -> tuple[int, int]:
        """(layers, heads) shown at once: as many as fit with tiles of at least ``MIN_TILE_PX`` whose notes
        fit under them in a font of at least ``NOTE_MIN_PT`` (all of them for a small model)."""
        from PySide6.QtGui import QFont, QFontMetricsF

        L, H = self._grid_shape
        fw, fh = self.figure.width(), self.figure.height()
        if not L or fw <= 0 or fh <= 0:
            return L, H
        font = QFont(self.style.font(NOTE_FACTOR))
        font.setPointSizeF(max(font.pointSizeF(), NOTE_MIN_PT))
        # a long input's notes arrive head by head: its page is sized for the widest one it can get (else the
        # first wider note changed the page's shape, and the page went back to the selected head's)
        texts = set(self.notes.all_texts()) | {"0.00 · 0.0"} | self._note_templates()
        metrics = QFontMetricsF(font)
        widest = max(metrics.horizontalAdvance(t) for t in texts)
        # px per tile side: the widest note fits between its neighbours, and its line (drawn a text margin
        # under the tile's frame) above the next row's tiles
        unit = max(MIN_TILE_PX, widest / 0.92 / PITCH_X, (DOC_MARGIN + metrics.height()) / (PITCH_Y - NOTE_Y))
        avail_w, avail_h = self.grid_room()
        cols = max(1, min(H, int((avail_w / unit - 1.12) // PITCH_X) + 1))
        rows = max(1, min(L, int((avail_h / unit - 1.5) // PITCH_Y) + 1))
        return even_page(L, rows), even_page(H, cols)

    def grid_room(self) -> tuple[float, float]:
        """(width, height) in px the grid's view box can have in the figure: what the labels, the colour bar, the
        title and the caption leave."""
        spacing = self.figure.layout.horizontalSpacing()
        # the figure's own margins too (9 px a side): without them two columns of notes were planned for 133 px
        # that had 115, and at 30 × 9 in a 1280×720 dock the notes ran together ("2.67 · 8.72.67 · 9.2")
        ml, mt, mr, mb = self.figure.layout.getContentsMargins()
        # (5 spacings across: the spare columns either side, the axis, the grid, the bar)
        avail_w = self.figure.width() - ml - mr - self.left.width() - self.bar.width() - 5 * spacing - 2
        caption = self.caption.height() if self.caption.isVisible() else 0.0
        avail_h = self.figure.height() - mt - mb - self.title_item.height() - caption - self.top.height() \
            - 5 * spacing - 2
        return avail_w, avail_h

    def page_ranges(self) -> tuple[range, range]:
        """The layers and heads of the page on screen: fixed pages (layer k on page k // rows, head k on page
        k // cols), the last one holding what is left (at 32 heads five a page: H30–H31). Pages clamped to end at
        the last head overlapped their neighbours and moved with the selection (H27–H31 after H31 was clicked,
        then H22–H26 a page back)."""
        L, H = self._grid_shape
        (rows, cols), (l0, h0) = self.page_shape(), self._page
        return range(l0, min(L, l0 + rows)), range(h0, min(H, h0 + cols))

    def page_text(self) -> str:
        """"layers 0–11 of 30 · heads 0–8 of 9" when the grid is shown a page at a time, else ""."""
        L, H = self._grid_shape
        rows, cols = self.page_shape()
        layers, heads = self.page_ranges()
        parts = []
        if rows < L:
            parts.append(f"layers {span_text(layers)} of {L}")
        if cols < H:
            parts.append(f"heads {span_text(heads)} of {H}")
        return " · ".join(parts)

    def keys_hint(self) -> str:
        """The presentation hint's words for a paged grid: F5 hides the ▲▼◀▶ buttons, and the keys that move the
        selected head (the page follows it) are the only way to the other pages ("" when one page shows all)."""
        return "Alt+arrows: layer / head (the page follows)" if self.page_text() else ""

    def page_note(self) -> str:
        """The caption's words on the page: on screen which page (the ▲▼◀▶ buttons beside the figure turn
        it); in an export, which a slide cannot page, which heads the slide shows and where the others are."""
        page = self.page_text()
        if not page or not is_exporting():
            return page
        L, H = self._grid_shape
        rows, cols = self.page_shape()
        layers, heads = self.page_ranges()
        off = [f"layers {_spans(range(L), layers)}" if rows < L else "",
               f"heads {_spans(range(H), heads)}" if cols < H else ""]
        flag = " and ".join(f for f, n in (("--layer", rows < L), ("--head", cols < H)) if n)
        return (f"this slide: {page}; not on it: {' · '.join(o for o in off if o)} (export again with {flag} "
                f"in them, or page with ▲▼◀▶ in the app)")

    def turn_page(self, direction: str) -> None:
        """Show the next page of layers ("down"), heads ("right"), or the previous ones."""
        rows, cols = self.page_shape()
        l0, h0 = self._page
        dl = {"down": rows, "up": -rows}.get(direction, 0)
        dh = {"right": cols, "left": -cols}.get(direction, 0)
        self._page = (l0 + dl, h0 + dh)
        self._apply_page()

    def _follow_selection(self) -> bool:
        """Move the page so the selected head is on it; True when it moved."""
        r = self.res
        if r is None or not self._grid_shape[0]:
            return False
        rows, cols = self.page_shape()
        l0, h0 = self._page
        if not l0 <= r.layer < l0 + rows:
            l0 = r.layer - r.layer % rows
        if not h0 <= r.head < h0 + cols:
            h0 = r.head - r.head % cols
        if (l0, h0) == self._page:
            return False
        self._page = (l0, h0)
        self._apply_page()
        return True

    def _apply_page(self) -> None:
        """The view's range on the page (clamped to the grid); page buttons and title follow."""
        L, H = self._grid_shape
        if not L:
            self.left.set_labels([])
            self.top.set_labels([])
            return
        rows, cols = self.page_shape()
        # a page starts at a multiple of the page's size (see page_ranges); the last may hold fewer
        l0 = max(0, min(self._page[0], L - 1)) // rows * rows
        h0 = max(0, min(self._page[1], H - 1)) // cols * cols
        self._page = (l0, h0)
        # the range includes the annotations under the last row (TextItems do not count as bounds)
        self.vb.setRange(QRectF(h0 * PITCH_X - 0.06, l0 * self._pitch_y - 0.06, (cols - 1) * PITCH_X + 1.12,
                                self.range_height(rows)), padding=0)
        # only the page is drawn and named: the aspect lock shows more of the grid than the page, and the
        # tiles there were cut at the edge, with their notes hidden or read as the next row's. A last page
        # holding fewer keeps the page's range: its tiles the size of every page's, the rest of it empty
        layers, heads = self.page_ranges()
        self.grid.set_window(layers, heads)
        self.notes.set_window(layers, heads)
        self.left.set_labels([f"L{i}" for i in layers], [i * self._pitch_y + 0.5 for i in layers])
        self.top.set_labels([f"H{i}" for i in heads], [i * PITCH_X + 0.5 for i in heads])
        self._mark_selected()
        for key, on in (("up", l0 > 0), ("down", l0 + rows < L), ("left", h0 > 0), ("right", h0 + cols < H)):
            self.page_buttons[key].setVisible(self._controls_on and (rows < L if key in ("up", "down") else cols < H))
            self.page_buttons[key].setEnabled(on)
        self._size_grid()
        self._ask_page()  # a long input's grid computes the page's heads (all_heads_long.py)
        if self.res is not None:
            self._set_title()

    def _draw_marks(self) -> None:
        if not self._follow_selection():  # (a page turned asks for its heads itself)
            self._ask_page()  # a long input computing only the selected head computes the one now selected
        self._mark_selected()

    def _mark_selected(self) -> None:
        """The selection frame and the bold axis labels, when the selected head is on the page."""
        r = self.res
        (l0, h0), (rows, cols) = self._page, self.page_shape()
        on_page = r is not None and self._grid_shape[0] > 0 and l0 <= r.layer < l0 + rows and h0 <= r.head < h0 + cols
        for m in self.marks:
            m.setVisible(on_page)
            if r is not None:
                m.setRect(QRectF(r.head * PITCH_X - 0.04, r.layer * self._pitch_y - 0.04, 1.08, 1.08))
        self.left.set_selected(r.layer - l0 if on_page else None)
        self.top.set_selected(r.head - h0 if on_page else None)

    # -- fitting to the view's size ---------------------------------------------------------------
    def _style_notes(self) -> None:
        font = self.style.font(self._note_factor())
        font.setPointSizeF(self._note_pt())
        self.notes.set_font(font)
        self.notes.set_colour(self.style.foreground)

    def _note_pt(self) -> float:
        """The notes' point size: never under NOTE_MIN_PT (12 px; the pages are sized for it)."""
        return max(self.style.font_pt(self._note_factor()), NOTE_MIN_PT)

    def _note_factor(self) -> float:
        """Font size of the notes under the tiles: 0.8 of the style's (presented on one page, 1.0), smaller when
        the widest note would run into its neighbour (presentation fonts on a small grid)."""
        texts, base = self.notes.all_texts(), self.note_base_factor()
        if not texts or self.vb.width() <= 0:
            return base
        (x0, x1), _ = self.vb.viewRange()
        pitch_px = PITCH_X * self.vb.width() / max(x1 - x0, 1e-9)
        metrics = self.style.metrics(base)
        widest = max(metrics.horizontalAdvance(t) for t in set(texts))  # "…" under all 144 while computing
        if widest <= pitch_px * 0.92:
            return base
        return max(0.4, round(base * pitch_px * 0.92 / widest, 2))

    def _size_grid(self) -> None:
        """Give the grid the width its tiles need at the height it has; the rest to the spare column."""
        L, H = getattr(self, "_grid_shape", (0, 0))  # also while _build runs
        if not L or not H or self.vb.height() <= 0:
            return
        L, H = self.page_shape()
        aspect = ((H - 1) * PITCH_X + 1.12) / self.range_height(L)
        extra = max(0.0, self.grid_room()[0] - self.vb.height() * aspect)
        for spare, width in zip((self.spare_left, self.spare), self.split_spare(extra)):
            if abs(spare.preferredWidth() - width) > 1:
                spare.setMinimumWidth(0)  # preferred only: a narrow dock may still squeeze it
                spare.setPreferredWidth(width)
                spare.setMaximumWidth(width)

    def _fit_notes(self, *args) -> None:
        if hasattr(self, "_page") and self._grid_shape[0]:
            rows, cols = self.page_shape()
            if getattr(self, "_shown_page_shape", None) != (rows, cols):  # the figure was resized: a new page
                self._shown_page_shape = (rows, cols)
                self._apply_page()
                self._follow_selection()
        if hasattr(self, "spare"):
            self.fit_pitch()  # presented on one page: the rows' pitch for the height the figure has now
            self._size_grid()
        notes = getattr(self, "notes", None)  # resized while _build is still adding items
        if notes is not None and notes.texts and abs(notes.font.pointSizeF() - self._note_pt()) > 0.05:
            self._style_notes()
