"""TokenLinesItem: the drawing of the token-lines view (tokens in two columns, one line per weight).

Every line of every shown head at once, each head in its own colour-blind-safe colour with opacity =
weight, at its own small offset where it leaves and reaches a token; a focused token's lines at full
strength and the others faded; crowded columns get a smaller font before labels are thinned; patch
inputs label the first patch of each grid row. :class:`~attnviz.gui.views.token_lines_view.TokenLinesView`
feeds it and owns the controls.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPen

from attnviz.gui.style import ViewStyle, head_colour
from attnviz.gui.widgets.legible import EXPORT_FLOOR_PT, floor_pt
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["TokenLinesItem", "MAX_TOKENS", "MIN_WEIGHT", "FADE", "MAX_LINES"]

LEGEND_ROW = 1.3  # a legend row's height, in text lines
MAX_TOKENS = 200  # beyond this the lines are an unreadable solid block
MIN_WEIGHT = 1.0 / 255  # lines fainter than one alpha step are invisible: not drawn
ALPHA_STEPS = 32  # lines are batched by quantised opacity: one drawLines call per (step, head)
FADE = 0.15  # opacity factor of the lines that do not touch the focused token
MAX_LINES = 3000  # drawn per paint at most (the strongest; a focused token's always): tens of thousands of
# long translucent lines take seconds to rasterise, and the faintest add nothing visible
AA_LINES = 1500  # above this many lines, no antialiasing (several times faster, hardly visible)
MIN_PT = EXPORT_FLOOR_PT  # smallest label font before labels are thinned (presenting: floor_pt's larger one)
LINE = 0.92  # labels are packed at this fraction of the font's line height


class TokenLinesItem(pg.GraphicsWidget):
    """The two token columns and the lines between them, laid out to the item's current size."""

    def __init__(self, style: ViewStyle):
        super().__init__()
        self.style = style
        self.left: list[str] = []
        self.right: list[str] = []
        self.weights: np.ndarray | None = None  # (H, Tq, Tk)
        self.heads: list[int] = []
        self.hover: tuple[str, int] | None = None
        self.selected: int | None = None  # the selected query (left token)
        self.grid: tuple[int, int] | None = None  # patch grid (rows, cols) of an image input
        self.n_prefix = 0  # tokens before the patches (CLS, DeiT's distillation token)
        self.picture: QImage | None = None  # the input image of patch inputs, drawn left of the queries
        self.dimmed: int | None = None  # a query that wrote nothing: its lines and label drawn grey
        self.on_hover = self.on_click = None
        self.setAcceptHoverEvents(True)

    def set_picture(self, rgb: np.ndarray | None) -> None:
        """Show the (H, W, 3) uint8 input image beside the query column (None: no image)."""
        if rgb is None:
            self.picture = None
        else:
            rgb = np.ascontiguousarray(rgb)
            h, w, _ = rgb.shape
            self.picture = QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
        self.update()

    def _picture_side(self) -> float:
        """Side of the square the input image is drawn in (0 without one)."""
        if self.picture is None or self.grid is None:
            return 0.0
        r = self.boundingRect()
        return float(min(r.height() * 0.4, r.width() * 0.22, 260 * self.style.font_scale))

    def set_data(self, left, right, weights, grid=None, dimmed: int | None = None) -> None:
        self.left, self.right = [display_token(t) for t in left], [display_token(t) for t in right]
        self.weights = weights
        self.dimmed = dimmed if dimmed is not None and 0 <= dimmed < len(self.left) else None
        self.grid = grid
        self.n_prefix = max(0, len(self.left) - grid[0] * grid[1]) if grid else 0
        self._drawn_key = None
        self.update()

    @property
    def focus(self) -> tuple[str, int] | None:
        """The token whose lines are drawn at full strength: the hovered one, else the selected query."""
        if self.hover is not None:
            return self.hover
        return ("left", self.selected) if self.selected is not None else None

    # -- geometry ------------------------------------------------------------------------------
    def font_factor(self) -> float:
        """The labels' font relative to the style's: smaller when the rows are too close for it."""
        step = self._step(self.style.metrics())
        full = self.style.metrics().height() * LINE
        if step >= full:
            return 1.0
        views = self.scene().views() if self.scene() is not None else []
        lo = min(1.0, floor_pt(self.style, views[0] if views else None) / self.style.font_pt())
        f = math.floor(step / full * 25) / 25
        while f > lo and self.style.metrics(f).height() * LINE > step:
            f = round(f - 0.04, 2)
        return max(lo, f)

    def _top(self, fm) -> float:
        """Where the token rows start: under the "query"/"key" headings and the legend's rows."""
        return fm.height() * (2.2 + LEGEND_ROW * len(self._legend_rows(fm)))

    def _legend_rows(self, fm) -> list[list[tuple[int, str, float]]]:
        """The shown heads' legend, (head, text, width) per entry, in rows as wide as the figure: on its own
        rows under the headings (between them it ran over "query" and "key" once the heads outgrew the gap)."""
        if not self.heads or self.weights is None:
            return []
        sw = fm.height() * 1.4
        room = max(self.boundingRect().width() - 8, 1.0)
        rows, row = [], []
        for h in self.heads:
            text = f"head {h}"
            w = sw + 4 + fm.horizontalAdvance(text) + fm.height()  # a line's height apart: 12 px ran "head 0" into
            # the next swatch on a slide, where the text is larger than the gap
            if row and sum(e[2] for e in row) + w > room:
                rows.append(row)
                row = []
            row.append((h, text, w))
        return rows + [row]

    def _step(self, fm) -> float:
        r = self.boundingRect()
        top = self._top(fm)
        n = max(len(self.left), len(self.right), 1)
        return min(max(r.height() - top - 4, 10) / n, fm.height() * 2.2)

    def _geometry(self):
        fm = self.style.metrics()
        r = self.boundingRect()
        sm = self.style.metrics(self.font_factor())
        text_w = max([sm.horizontalAdvance(t) for t in self.left + self.right] +
                     [fm.horizontalAdvance(t) for t in ("query", "key")] + [40.0])
        text_w = min(text_w, r.width() * 0.25)
        pic = self._picture_side()
        room = pic + 24 if pic else 0.0  # the input image left of the queries
        gap = float(np.clip(r.width() - room - 2 * text_w - 40, 80, 420 * self.style.font_scale))
        x0 = room + (r.width() - room - 2 * text_w - gap) / 2
        lx, rx = x0 + text_w, x0 + text_w + gap
        return lx, rx, text_w, self._top(fm), self._step(fm)

    def lane_offsets(self, step: float) -> dict[int, float]:
        """Vertical offset of each shown head's line ends within a token's row (0 for one head)."""
        n = len(self.heads)
        if n < 2:
            return {h: 0.0 for h in self.heads}
        lane = min(step * 0.7 / n, 3.0 * max(1.0, self.style.line_width))
        return {h: (i - (n - 1) / 2) * lane for i, h in enumerate(self.heads)}

    def token_at(self, pos: QPointF) -> tuple[str, int] | None:
        """Which token (side, index) is at ``pos`` (item coordinates), if any."""
        lx, rx, text_w, top, step = self._geometry()
        i = int((pos.y() - top) // step)
        if lx - text_w - 4 <= pos.x() <= lx + 6 and 0 <= i < len(self.left):
            return "left", i
        if rx - 6 <= pos.x() <= rx + text_w + 4 and 0 <= i < len(self.right):
            return "right", i
        return None

    # -- what is drawn -------------------------------------------------------------------------
    def lines(self, head: int) -> np.ndarray:
        """(Tq·Tk, 4) rows of (query, key, weight, opacity): every line of ``head``.

        Opacity is the weight; with a focused token the lines not touching it are faded (× FADE).
        Lines whose opacity is below one alpha step (1/255) are invisible and skipped when painting.
        """
        w = np.asarray(self.weights[head], dtype=np.float64)
        tq, tk = w.shape
        q, k = np.divmod(np.arange(tq * tk), tk)
        weight = w.reshape(-1)
        opacity = weight.copy()
        focus = self.focus
        if focus is not None:
            side, idx = focus
            touches = (q == idx) if side == "left" else (k == idx)
            opacity[~touches] *= FADE
        return np.stack([q, k, weight, opacity], axis=1)

    def visible_lines(self, head: int) -> np.ndarray:
        """(N, 3) rows of (query, key, weight) drawn at full strength now (the focus's, or all)."""
        rows = self.lines(head)
        keep = (rows[:, 2] >= MIN_WEIGHT) & (rows[:, 3] == rows[:, 2])
        return rows[keep, :3]

    def labelled(self, side: str) -> list[int]:
        """Indices of the tokens of ``side`` whose labels are drawn at the current size."""
        tokens = self.left if side == "left" else self.right
        fm = self.style.metrics(self.font_factor())
        step = self._step(self.style.metrics())
        stride = max(1, math.ceil(fm.height() * LINE / step - 1e-9))
        focus = self.focus
        if self.grid is not None and stride > 1 and len(tokens) == len(self.left):
            gw = self.grid[1]  # patches: the first of every grid row (and CLS), readable as a grid
            shown = [i for i in range(len(tokens)) if i < self.n_prefix or (i - self.n_prefix) % gw == 0]
        else:
            shown = list(range(0, len(tokens), stride))
        if focus is not None and focus[0] == side and focus[1] not in shown and 0 <= focus[1] < len(tokens):
            shown = [i for i in shown if abs(i - focus[1]) >= stride] + [focus[1]]
        return shown

    # -- drawing -------------------------------------------------------------------------------
    def paint(self, p, *args):
        st = self.style
        fm = st.metrics()
        lx, rx, text_w, top, step = self._geometry()
        fg = QColor(st.foreground)
        p.setRenderHint(p.RenderHint.Antialiasing, True)
        p.setFont(st.font(1.0))  # the headings at the base size they are laid out for (0.9 drew 10.8 px)
        p.setPen(QPen(fg))
        p.drawText(QRectF(lx - text_w, 0, text_w, fm.height() * 1.6), int(Qt.AlignRight | Qt.AlignVCenter), "query")
        p.drawText(QRectF(rx, 0, text_w, fm.height() * 1.6), int(Qt.AlignLeft | Qt.AlignVCenter), "key")
        self._paint_legend(p, fm)
        if self.weights is not None:
            self._paint_lines(p, lx, rx, top, step)
        self._paint_grid_rows(p, lx, rx, text_w, top, step, fg)
        self._paint_labels(p, lx, rx, text_w, top, step, fg)
        self._paint_picture(p, lx - text_w, top, fg)

    def _paint_picture(self, p, right_edge, top, fg) -> None:
        """Patch inputs: the image left of the queries, the focused patch outlined on it."""
        side = self._picture_side()
        if not side:
            return
        rect = QRectF(right_edge - 24 - side, top, side, side)
        p.save()
        p.setRenderHint(p.RenderHint.SmoothPixmapTransform, False)  # the patches' pixels, not a blur
        p.drawImage(rect, self.picture)
        p.restore()
        p.setPen(QPen(fg, 1))
        p.drawRect(rect)
        focus = self.focus
        if focus is None or focus[1] < self.n_prefix:
            return
        gh, gw = self.grid
        r, c = divmod(focus[1] - self.n_prefix, gw)
        if r >= gh:
            return
        cell = QRectF(rect.left() + c * side / gw, rect.top() + r * side / gh, side / gw, side / gh)
        for colour, width in (("#000000", 4.0), (self.style.highlight, 2.0)):
            p.setPen(QPen(QColor(colour), width * max(1.0, self.style.line_width * 0.6)))
            p.drawRect(cell)

    def _paint_legend(self, p, fm) -> None:
        """The shown heads' colours, centred under the column headings (the figure has no check boxes)."""
        p.setFont(self.style.font(1.0))  # the legend's rows are measured with the base font too
        sw = fm.height() * 1.4
        entries = [e for row in self._legend_rows(fm) for e in row]
        for (h, text, w), rect in zip(entries, self.legend_rects()):
            x, y = rect.left(), rect.center().y()
            p.setPen(QPen(QColor(head_colour(h)), 3 * max(1.0, self.style.line_width)))
            p.drawLine(QPointF(x, y), QPointF(x + sw, y))
            p.setPen(QPen(QColor(self.style.foreground)))
            p.drawText(QRectF(x + sw + 4, y - fm.height() / 2, w, fm.height()), int(Qt.AlignLeft | Qt.AlignVCenter),
                       text)

    def legend_rects(self) -> list[QRectF]:
        """Where each legend entry is drawn (item coordinates), for the layout checks."""
        fm = self.style.metrics()
        lx, rx, *_ = self._geometry()
        out = []
        for i, row in enumerate(self._legend_rows(fm)):
            x = (lx + rx) / 2 - sum(e[2] for e in row) / 2
            x = min(max(x, 4.0), max(self.boundingRect().width() - 4 - sum(e[2] for e in row), 4.0))
            y = fm.height() * (1.6 + LEGEND_ROW * i)
            for _h, _text, w in row:
                out.append(QRectF(x, y, w, fm.height() * LEGEND_ROW))
                x += w
        return out

    def heading_rects(self) -> list[QRectF]:
        """Where "query" and "key" are drawn (item coordinates)."""
        lx, rx, text_w, *_ = self._geometry()
        fm = self.style.metrics()
        return [QRectF(lx - fm.horizontalAdvance("query"), 0, fm.horizontalAdvance("query"), fm.height() * 1.6),
                QRectF(rx, 0, fm.horizontalAdvance("key"), fm.height() * 1.6)]

    def drawn_lines(self) -> tuple[dict[int, np.ndarray], float]:
        """The lines painted now: head → (N, 4) rows as in :meth:`lines`, and the weight below which
        lines were left out to keep within ``MAX_LINES`` (0 when none was).

        Invisible lines (opacity < 1/255) are never drawn; a focused token's lines always are.
        """
        key = (id(self.weights), tuple(self.heads), self.focus)
        if getattr(self, "_drawn_key", None) == key:
            return self._drawn
        per_head = {}
        for h in self.heads:
            rows = self.lines(h)
            per_head[h] = rows[rows[:, 3] >= MIN_WEIGHT]
        cutoff = 0.0
        total = sum(len(r) for r in per_head.values())
        if total > MAX_LINES:
            full = np.concatenate([r[:, 3] == r[:, 2] for r in per_head.values()]) if self.focus else None
            opacity = np.concatenate([r[:, 3] for r in per_head.values()])
            # the focus's lines are kept whatever their weight; the rest by opacity, strongest first
            rank = np.where(full, np.inf, opacity) if full is not None else opacity
            cutoff = float(np.partition(rank, total - MAX_LINES)[total - MAX_LINES])
            cutoff = min(cutoff, 1.0)
            per_head = {h: r[(r[:, 3] >= cutoff) | ((r[:, 3] == r[:, 2]) & (self.focus is not None))]
                        for h, r in per_head.items()}
        self._drawn_key, self._drawn = key, (per_head, cutoff)
        return self._drawn

    def _paint_lines(self, p, lx, rx, top, step) -> None:
        width = 2.0 * self.style.line_width
        lanes = self.lane_offsets(step)
        per_head, _ = self.drawn_lines()
        if hasattr(p, "setRenderHint") and sum(len(r) for r in per_head.values()) > AA_LINES:
            p.setRenderHint(p.RenderHint.Antialiasing, False)
        batches: dict[tuple[int, int, int], np.ndarray] = {}
        for h, rows in per_head.items():
            steps = np.minimum((rows[:, 3] * ALPHA_STEPS).astype(int), ALPHA_STEPS - 1)
            dim = (rows[:, 0] == self.dimmed).astype(int) if self.dimmed is not None else np.zeros(len(rows), int)
            for s in np.unique(steps):
                for d in (0, 1):
                    pick = (steps == s) & (dim == d)
                    if pick.any():
                        batches[(int(s), 1 - d, h)] = rows[pick]
        # faint lines first, then stronger ones of every head on top: a strong line is never hidden
        # under (and mixed with) another head's faint ones; a row that wrote nothing goes under, grey
        for (s, live, h) in sorted(batches, key=lambda b: (b[1], b[0], b[2])):
            c = QColor(head_colour(h) if live else self.style.foreground)
            c.setAlphaF(min(1.0, (s + 0.5) / ALPHA_STEPS) * (1.0 if live else 0.3))
            p.setPen(QPen(c, width))
            dy = lanes[h]
            p.drawLines([QLineF(lx + 4, top + (q + 0.5) * step + dy, rx - 4, top + (k + 0.5) * step + dy)
                         for q, k, _, _ in batches[(s, live, h)]])
        if hasattr(p, "setRenderHint"):
            p.setRenderHint(p.RenderHint.Antialiasing, True)

    def _paint_grid_rows(self, p, lx, rx, text_w, top, step, fg) -> None:
        """Patch inputs: a thin rule before every grid row in both columns."""
        if self.grid is None:
            return
        gh, gw = self.grid
        c = QColor(fg)
        c.setAlpha(60)
        p.setPen(QPen(c, 1))
        for r in range(1, gh):
            y = top + (self.n_prefix + r * gw) * step
            for x0, x1 in ((lx - text_w, lx), (rx, rx + text_w)):
                p.drawLine(QPointF(x0, y), QPointF(x1, y))

    def _paint_labels(self, p, lx, rx, text_w, top, step, fg) -> None:
        st = self.style
        factor = self.font_factor()
        fm = st.metrics(factor)
        focus = self.focus
        for side, tokens, x, align in (("left", self.left, lx - text_w, Qt.AlignRight),
                                       ("right", self.right, rx, Qt.AlignLeft)):
            for i in self.labelled(side):
                tok = tokens[i]
                is_focus = focus == (side, i)
                rect = QRectF(x, top + i * step + step / 2 - fm.height() / 2, text_w, fm.height())
                if is_focus:
                    hl = QColor(fg)
                    hl.setAlpha(40)
                    p.fillRect(QRectF(x, top + i * step, text_w, step), hl)
                p.setFont(st.font(factor, bold=is_focus))
                pen = QColor(fg)
                if side == "left" and i == self.dimmed:
                    pen.setAlphaF(0.55)
                p.setPen(QPen(pen))
                p.drawText(rect, int(align | Qt.AlignVCenter), fm.elidedText(tok, Qt.ElideRight, text_w))

    # -- interaction ---------------------------------------------------------------------------
    def hoverEvent(self, ev):
        hit = None if ev.isExit() else self.token_at(ev.pos())
        if hit != self.hover:
            self.hover = hit
            self.update()
            if self.on_hover is not None:
                self.on_hover(hit)

    def mouseClickEvent(self, ev):
        hit = self.token_at(ev.pos())
        if ev.button() == Qt.LeftButton and hit is not None and self.on_click is not None:
            ev.accept()
            self.on_click(*hit)
