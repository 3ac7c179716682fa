"""How a :class:`~attnviz.gui.walkthrough.matrix_grid.MatrixGrid` draws itself: coloured cells with their
numbers or a heatmap, hatched −∞ cells, token labels (thinned when the rows are denser than the text,
the selected row always named), the frame of a head's colour, the highlighted query row and the legend.

The grid's geometry (:meth:`MatrixGrid._cells`) decides where; this mixin only paints, with QPainter, so
SVG and PDF exports keep every number and label as text.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPen, QStaticText, QTransform

from attnviz.analysis.decoder_positions import END, END_ROW
from attnviz.gui.walkthrough.colour_scales import LEGEND_BAR, colours, paint_legend
from attnviz.gui.widgets.formula_text import formula_html, has_subscripts
from attnviz.gui.walkthrough.number_format import MINUS, format_number
from attnviz.gui.widgets.hatch import draw_hatch, mask_path

__all__ = ["MatrixGridPainting", "LABEL_CHARS", "short_label"]

LABEL_CHARS = 10  # token labels are cut to this many characters (the hover names the whole token)


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the cut said with "…" (translate's "(end): nothing written" read
    "(end): not"). That row, too long for a grid, is named by its short name "(end)" whole rather than cut to
    "(end): no…" (the hover and the pack's caption say the rest)."""
    if len(text) <= limit:
        return text
    if text == END_ROW and len(END) <= limit:
        return END
    return text[:limit - 1] + "…"


class MatrixGridPainting:
    """The painting half of :class:`~attnviz.gui.walkthrough.matrix_grid.MatrixGrid`."""

    def _legend_texts(self) -> tuple[str, str]:
        hi = format_number(self.vmax, 2)
        return ("0" if self.kind == "prob" else MINUS + hi), hi

    def _legend_width(self) -> float:
        """Room for "−2.6   0   2.6" under the grid, so the end labels never overlap."""
        return self._memoized("legend", self._measure_legend)

    def _measure_legend(self) -> float:
        fm = QFontMetricsF(self._fonts()[2])
        lo, hi = self._legend_texts()
        width = fm.horizontalAdvance(lo) + fm.horizontalAdvance(hi) + LEGEND_BAR + 12
        if self.values.size and not np.isfinite(self.values).all():
            width += fm.height() + 20 + fm.horizontalAdvance(f"{MINUS}∞")
        return width

    def _rgb(self) -> np.ndarray:
        """(rows, cols, 3) uint8 colours of the cells."""
        return colours(self.values, self.kind, self.vmax, self.style)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.TextAntialiasing)
        self.paint(p)
        p.end()

    def paint(self, p: QPainter) -> None:
        st = self.style
        num_font, title_font, label_font = self._fonts()
        fg = QColor(st.foreground)
        area, cw, ch = self._cells() if self.values.size else (QRectF(0, self._margins()[1], 0, 0), 0.0, 0.0)
        y0 = area.top() - self._margins()[1]
        p.setPen(fg)
        p.setFont(title_font)
        ft = QFontMetricsF(title_font)
        if has_subscripts(self.title):  # "Q = X W_Q + b_Q" with real subscripts, as on a slide
            title = QStaticText(formula_html(self.title))
            title.setTextFormat(Qt.RichText)
            title.prepare(p.transform(), title_font)
            p.drawStaticText(QPointF(0, y0 + (ft.height() - title.size().height()) / 2), title)
        else:
            p.drawText(QRectF(0, y0, self.width(), ft.height()), int(Qt.AlignLeft | Qt.AlignVCenter),
                       f"{self.title}   ")
        tw = ft.horizontalAdvance(f"{self.title}   ")
        p.setFont(label_font)
        p.setPen(QColor(st.foreground).lighter(160) if st.background != "#ffffff" else QColor("#606060"))
        if self._subtitle_below():
            tw, y0 = 0.0, y0 + ft.height()
        p.drawText(QRectF(tw, y0, max(self.width() - tw, 1), ft.height()), int(Qt.AlignLeft | Qt.AlignVCenter),
                   self.subtitle)
        if not self.values.size:
            return
        rows, cols = self.values.shape
        self._layout = (area, cw, ch)
        finite = np.isfinite(self.values) & ~self.masked  # masked cells are hatched like −∞
        rgb = self._rgb()
        if self._numbers:
            num_font = self.style.font(1.15 * self._zoom)
            self._paint_numbers(p, area, cw, ch, rgb, finite, num_font)
        else:
            self._paint_heatmap(p, area, rgb, finite)
        self._paint_labels(p, area, cw, ch, label_font)
        if self.frame_colour:
            p.setPen(QPen(QColor(self.frame_colour), 3 * st.line_width))
            p.setBrush(Qt.NoBrush)
            p.drawRect(area.adjusted(-2, -2, 2, 2))
        for r in sorted(self.highlight_rows):
            if 0 <= r < rows:
                # Tol orange, visible on both maps; never thicker than a third of a cell
                p.setPen(QPen(QColor("#EE7733"), max(1.0, min(2.5 * st.line_width, ch / 3))))
                p.setBrush(Qt.NoBrush)
                p.drawRect(QRectF(area.left(), area.top() + r * ch, area.width(), ch))
        paint_legend(self, p, area, label_font)

    def _paint_numbers(self, p, area, cw, ch, rgb, finite, font) -> None:
        p.setFont(font)
        grid_pen = QPen(QColor(self.style.background), 1)
        for r in range(self.values.shape[0]):
            for c in range(self.values.shape[1]):
                cell = QRectF(area.left() + c * cw, area.top() + r * ch, cw, ch)
                if finite[r, c]:
                    col = QColor(*[int(x) for x in rgb[r, c]])
                    p.fillRect(cell, col)
                    lum = 0.299 * col.red() + 0.587 * col.green() + 0.114 * col.blue()
                    p.setPen(QColor("#000000") if lum > 140 else QColor("#ffffff"))
                else:
                    p.fillRect(cell, QColor(self.style.masked))
                    draw_hatch(p, cell, QColor(self.style.foreground).lighter(130), spacing=7, width=0.8)
                    p.setPen(QColor(self.style.foreground))
                p.drawText(cell, int(Qt.AlignCenter), self.cell_text(r, c))
                p.setPen(grid_pen)
                p.drawRect(cell)

    def _paint_heatmap(self, p, area, rgb, finite) -> None:
        rows, cols = self.values.shape
        rgba = np.empty((rows, cols, 4), dtype=np.uint8)
        rgba[..., :3], rgba[..., 3] = rgb, 255
        img = QImage(np.ascontiguousarray(rgba).data, cols, rows, 4 * cols, QImage.Format_RGBA8888).copy()
        p.save()
        p.setRenderHint(QPainter.SmoothPixmapTransform, False)  # one cell, one colour: no blur
        p.drawImage(area, img)
        if not finite.all():
            path = QTransform.fromScale(area.width() / cols, area.height() / rows).map(mask_path(~finite))
            path.translate(area.topLeft())
            p.fillPath(path, QColor(self.style.masked))
            p.setClipPath(path)
            draw_hatch(p, path.boundingRect(), QColor(self.style.foreground).lighter(130), spacing=7, width=0.8)
        p.restore()

    def _paint_labels(self, p, area, cw, ch, font) -> None:
        rows, cols = self.values.shape
        fm = QFontMetricsF(font)
        p.setFont(font)
        p.setPen(QColor(self.style.foreground))
        if self.row_labels:
            # thinned, never dropped: every k-th token when the rows are denser than the text (at a
            # slightly smaller size first, see row_label_font)
            p.setFont(self.row_label_font())
            fr = QFontMetricsF(p.font())  # its own line: a row font above the label font was cut to the latter's
            every = self.row_label_stride()
            near = {h + d for h in self.highlight_rows for d in range(1 - every, every)} if every > 1 else set()
            for r, lab in enumerate(self.row_labels[:rows]):
                # the selected row is always named; thinned neighbours make way for it
                if r in self.highlight_rows or (r % every == 0 and r not in near):
                    y = area.top() + r * ch + ch / 2
                    p.drawText(QRectF(0, y - fr.height() / 2, area.left() - 6, fr.height()),
                               int(Qt.AlignRight | Qt.AlignVCenter), short_label(lab))
        p.setFont(font)
        if not self._show_col_labels():
            return
        shown = self.col_labels[:cols]
        if not self._rotated_cols():
            y = area.top() - fm.height() * 1.05
            for c, lab in enumerate(shown):
                p.drawText(QRectF(area.left() + c * cw, y, cw, fm.height()), int(Qt.AlignCenter),
                           lab if fm.horizontalAdvance(lab) <= cw - 2 else fm.elidedText(lab, Qt.ElideRight, cw - 2))
            return
        every = self.col_label_stride()
        font = self.col_label_font()
        fm = QFontMetricsF(font)
        p.setFont(font)
        for c, lab in enumerate(shown):
            if c % every:
                continue
            p.save()
            # upright text reading bottom-to-top, its baseline centred on the column, ending above the cells
            p.translate(area.left() + c * cw + cw / 2 + fm.ascent() / 2 - fm.descent() / 2, area.top() - 4)
            p.rotate(-90)
            p.drawText(QPointF(0, 0), short_label(lab))
            p.restore()
