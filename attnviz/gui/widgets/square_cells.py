"""Square cells for :class:`~attnviz.gui.widgets.heatmap.LabelledHeatmap` (``lock_aspect``): the matrix anchored at
its axes, the width it cannot use in an empty column right of its colour bar; for ``centred`` maps also the matrix's
row held to the matrix (the bar as tall as the cells) and the spare height split above and below; for maps side by
side (``share_cells``, ``balance_widths``) one cell size. Kept apart from the heatmap's data and style code.
"""

from __future__ import annotations

UNLIMITED = 16777215.0  # Qt's QWIDGETSIZE_MAX: no maximum
# peers size each other a few levels deep while they settle; a masked-lm causal mask laid out at 1280×720, then at
# 1600×1200, had two peers take turns without end (RecursionError): deeper than this, a pass stops asking
MAX_PEER_DEPTH = 12
_peer_depth = [0]  # how deep the peers' sizing is now (GUI thread only)

__all__ = ["SquareCells", "UNLIMITED"]


class SquareCells:
    """Mixed into LabelledHeatmap: needs its ``image``, ``vb``, ``left``, ``bar``, ``title``, ``bottom``, ``spare``,
    ``spare_low`` (centred), ``layout``, ``cell_peers``, ``centred`` and the sizes set in its constructor."""

    def _size_square(self, *args) -> None:
        """Square cells: the width the matrix cannot use goes to an empty column right of the colour
        bar, so the bar sits next to the matrix instead of across the spare room."""
        if not hasattr(self, "image"):  # the layout settles while the constructor adds items
            return
        rows, cols = self.image.shape_rc
        if not rows or not cols:
            self._set_spare(0.0)
            if self.centred:
                self.layout.setRowMaximumHeight(2, UNLIMITED)
            return
        fixed = sum(item.width() for item in (self.left, self.bar)) + 4 * self.layout.horizontalSpacing() + 2
        avail_w = self.width() - fixed
        if self.centred and self.vb.width() > 0:  # the width the matrix and the spare column share, as laid out
            avail_w = self.vb.width() + self.spare.width()  # (the estimate above was a few px off: bars taller)
        top = self.title.height() + (self.bottom.height() if self.bottom.orientation == "top" else 0)
        avail_h = self.height() - top - 4 * self.layout.verticalSpacing() - 2
        if avail_w <= 0 or avail_h <= 0:
            return
        if self.centred and self.vb.height() > 0:  # the height the matrix, the spare row and the centring share
            avail_h = self.vb.height() + self.spare_low.height() + self.layout.getContentsMargins()[1] - self._margins[1]
        if self.centred:  # room under the last row for its label (see slack below): a height-bound map cut it
            avail_h -= max(0.0, (1.5 * self.left._metrics().height() - avail_h / rows) / 2 + 2)
        self._own_px, self._room_px_h = min(avail_w / cols, avail_h / rows), avail_h / rows
        px = min([m._own_px for m in self.cell_peers if m._own_px > 0 and m.isVisible()] + [self._own_px])
        extra = max(0.0, avail_w - cols * px)
        changed = abs(self.spare.preferredWidth() - extra) > 1
        if changed:
            self._set_spare(extra)
        # the matrix's row no taller than the matrix: the colour bar beside it is as tall as the cells, not as the
        # room (a width-bound 21 × 21 map had a bar three times its height, deck page 12's 2-row maps five times)
        # (and half a label more where a row label is taller than its row: the last one is not cut at the axis' end)
        slack = max(0.0, (1.5 * self.left._metrics().height() - px) / 2 + 2)  # (a label image: its line, margins)
        row_h = min(avail_h + slack, self._bar_height(rows * px + slack, avail_h))
        if self.centred and abs(self.layout.rowMaximumHeight(2) - row_h) > 1:
            changed = True
            self.layout.setRowPreferredHeight(2, row_h)  # asked before the spare below it grows
            self.layout.setRowMaximumHeight(2, row_h)
        self._drawn_px = px
        head_moved, self._head = abs(self._head - top) > 1, top
        if self.centred:  # peers' matrices on one line: the title and column labels above it differ in height
            head = max([m._head for m in self.cell_peers if m.isVisible()] + [top])
            base = self._margins[1]
            half = base + round(max(0.0, avail_h - base - self._margins[3] + top - head - row_h) / 2) + head - top
            left, margin, right, bottom = self.layout.getContentsMargins()
            if abs(margin - half) > 1:
                changed = True
                self.layout.setContentsMargins(left, half, right, bottom)
        if changed and self.centred and not self._settling:
            # placed now, not in a posted pass: until then the matrix's box kept the last pass's height, its cells
            # were drawn at that size, and a view judging them (the mask's "−∞" legible?) judged a moment's layout
            self._settling = True
            try:
                self.layout.activate()
            finally:
                self._settling = False
        if _peer_depth[0] >= MAX_PEER_DEPTH:
            return  # peers asking each other back and forth: the outer passes go on (they recursed for ever)
        _peer_depth[0] += 1
        try:
            for peer in self.cell_peers:
                if peer is not self and (abs(peer._drawn_px - px) > 0.01 or head_moved and self.centred):
                    peer._size_square()
                    peer._fit_square()
        finally:
            _peer_depth[0] -= 1

    def _bar_height(self, matrix_h: float, most: float) -> float:
        """The matrix's row height: the matrix's, or taller (up to ``most``) while the colour bar beside it would
        wrap its label onto more than a line a part (a 2-row map's bar broke "attention weight" into "attent…")."""
        bar = self.bar
        if not (bar.isVisible() and bar.style.colour_bar and bar.label):
            return matrix_h
        parts = len([p for p in bar.label.split(" · ") if p])
        h = matrix_h
        while h < most and len(bar._label_lines(h)) > parts:
            h = min(most, h * 1.1 + 4)
        return h

    @staticmethod
    def balance_widths(row, maps, on: bool = True) -> None:
        """Peers side by side in ``row`` (a GraphicsLayout): each map as wide as its labels and bar plus its matrix at
        the one cell size that fills the row (``on``; else the layout's own widths again). The grid gave the columns
        widths by the maps' wishes (a long title, a bar or none), and the widest's spare width was room the others'
        matrices lacked: the mask's M kept ~50 layout px beside it and P ~40 while all three were width-bound."""
        maps = [m for m in maps if m.isVisible() and m.lock_aspect and m.image.shape_rc[1] > 0]
        if not on or not maps:
            for m in maps:
                m.setMaximumWidth(UNLIMITED)
            return
        left, _, right, _ = row.layout.getContentsMargins()
        width = row.width() - left - right - row.layout.horizontalSpacing() * (len(maps) - 1) - 2
        fixed = [m.width() - m.vb.width() - m.spare.width() for m in maps]
        cols = [m.image.shape_rc[1] for m in maps]
        px = min([(width - sum(fixed)) / sum(cols)] + [m._room_px_h for m in maps])  # (bound by the height too)
        if px > 0:
            for m, f, c in zip(maps, fixed, cols):
                m.setMaximumWidth(f + c * px + 1)

    def share_cells(self, maps) -> None:
        """Draw the cells of ``maps`` (square-cell maps side by side) at one size, the smallest any of them fits: each
        sized its cells from its own column, and the grid gives columns different widths (their colour bars' and
        row labels' widths differ), so three 21 × 21 maps of one figure came out 217, 222 and 254 px wide."""
        maps = list(maps)
        for m in maps:
            m.cell_peers = maps

    def _set_spare(self, width: float) -> None:
        # preferred, not minimum: a narrow dock may still squeeze the figure (the spare goes first)
        self.spare.setMinimumWidth(0)
        self.spare.setPreferredWidth(width)
        self.spare.setMaximumWidth(width)

    def _fit_square(self, *args) -> None:
        """Square cells with the matrix in the top-left corner of the view (spare room right/bottom)."""
        if not hasattr(self, "image"):  # the layout settles while the constructor adds items
            return
        rows, cols = self.image.shape_rc
        w, h = self.vb.width(), self.vb.height()
        if not rows or not cols or w <= 0 or h <= 0:
            return
        px = min(w / cols, h / rows)  # pixels per cell
        if len(self.cell_peers) > 1 and self._drawn_px > 0:
            px = min(px, self._drawn_px)  # the cell size the peers share (share_cells)
        self.vb.setRange(xRange=(0, w / px), yRange=(0, h / px), padding=0, disableAutoRange=True)
