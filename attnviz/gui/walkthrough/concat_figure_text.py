"""The words of the concat figure (:class:`~attnviz.gui.walkthrough.concat_figure.ConcatFigure`): each block's title
and shape, the colour scales' legends, head numbers and token names. Where each title and legend stands is computed
once (``text_boxes``), for the paint and for tests: a title or legend never runs into the next block's ("concat(Z₀ …
Z₈)" ended where "W_O" began, "W_O: ±0.08 · b_O: ±0.01" ran into "A: ±0.09")."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QStaticText, QTextDocument, QTransform

from attnviz.gui.style import head_colour
from attnviz.gui.walkthrough.number_format import format_number, subscript
from attnviz.gui.widgets.formula_text import formula_html, has_subscripts

__all__ = ["ConcatText"]


class ConcatText:
    """Titles, legends and labels of ConcatFigure (mixed in: its ``rects``, fonts, matrices and ``_vmax``)."""

    def title_gap(self) -> float:
        """Blank between a title or legend and the next block's."""
        return QFontMetricsF(self._fonts()[1]).horizontalAdvance("  ")

    @staticmethod
    def concat_title(H: int) -> str:
        zs = f"Z{subscript(0)} … Z{subscript(H - 1)}" if H > 2 else ", ".join(f"Z{subscript(h)}" for h in range(H))
        return f"concat({zs})"

    def legend_texts(self) -> dict[str, str]:
        """The range of each colour scale, as drawn under its block (plain notation: W_O, b_O)."""
        z = f"Z: ±{format_number(self._vmax(self.Z), 2)}, every head" + (" · P: 0…1" if self.P is not None else "")
        w = f"W_O: ±{format_number(self._vmax(self.W_O), 2)}"
        if self.b_O is not None:
            w += f" · b_O: ±{format_number(self._vmax(self.b_O), 2)}"
        return {"Z": z, "W_O": w, "A": f"A: ±{format_number(self._vmax(self.A), 2)}"}

    def _text_widths(self, ft, fl, H: int, T: int, dh: int, D: int, whole: bool) -> tuple[list[float], float]:
        """The narrowest each block's titles and legends allow, with its operator's column and a gap after:
        ``whole``: concat's full title and every legend on one line, else its short title "concat(Z)" and legends
        that may wrap to two lines but no narrower; and W_O's "+ b_O 1 × D" line (0 without)."""
        pad = 8.0 + self.title_gap()
        legend = fl.horizontalAdvance("W_O: ±0.00") + 4
        legends = {k: (fl.horizontalAdvance(v) + 4 if whole else legend) for k, v in self.legend_texts().items()}
        z = max(ft.horizontalAdvance(self.concat_title(H) if whole else "concat(Z)"),
                fl.horizontalAdvance(f"{T} × {H}·{dh}"), legends["Z"]) + pad
        w = max(ft.horizontalAdvance("W_O"), fl.horizontalAdvance(f"{H * dh} × {D}"), legends["W_O"]) + pad
        a = max(ft.horizontalAdvance("A"), fl.horizontalAdvance(f"{T} × {D}"),
                legends["A"] if whole else fl.horizontalAdvance("A: ±0.00")) + pad
        bias = fl.horizontalAdvance("+ b_O  1 × ") + fl.horizontalAdvance(str(D)) + pad if self.b_O is not None else 0.0
        return [z, w, a], bias

    # -- where the words stand ----------------------------------------------------------------------
    def _title_static(self, title: str, font) -> QStaticText | None:
        """``title`` as rich text when it has indices (W_O with a real subscript O), else None (plain text)."""
        if not has_subscripts(title):
            return None
        text = QStaticText(formula_html(title))
        text.setTextFormat(Qt.TextFormat.RichText)
        text.prepare(QTransform(), font)
        return text

    def titles(self) -> list[tuple[str, str, QRectF]]:
        """(block, title, box) of the titles above concat(Z), W_O and A: a title wider than its block (and the
        operator after it, less a gap) gives way to its short form."""
        r = self.rects
        H = self.Z.shape[0]
        title_font, label_font, _ = self._fonts()
        ft, fl = QFontMetricsF(title_font), QFontMetricsF(label_font)
        y = r["W_O"].top() - ft.height() - fl.height() * 1.2
        z_room = r["op0"].right() - r["Z0"].left() - self.title_gap()
        concat = self.concat_title(H) if ft.horizontalAdvance(self.concat_title(H)) <= z_room else "concat(Z)"
        a_title = "A (attention output)"
        if ft.horizontalAdvance(a_title) > self.width() - r["A"].left():
            a_title = "A"
        out = []
        for block, x, title in (("Z", r["Z0"].left(), concat), ("W_O", r["W_O"].left(), "W_O"),
                                ("A", r["A"].left(), a_title)):
            static = self._title_static(title, title_font)
            width = static.size().width() if static is not None else ft.horizontalAdvance(title)
            out.append((block, title, QRectF(x, y, width, ft.height())))
        return out

    def legends(self) -> list[tuple[str, QStaticText, QPointF]]:
        """(block, text, top-left) of each colour scale's legend under its block, wrapped to the block less a gap
        between its "name: range" parts, never inside one (a narrow Z block wrapped "P:" / "0…1")."""
        r = self.rects
        H = self.Z.shape[0]
        label_font = self._fonts()[1]
        fl = QFontMetricsF(label_font)
        gap, z0 = self.title_gap(), r["Z0"]
        wo = r["b_O"] if "b_O" in r else r["W_O"]
        widths = {"Z": r["op0"].right() - z0.left() - gap, "W_O": r["op1"].right() - r["W_O"].left() - gap,
                  "A": max(r["A"].width(), self.width() - r["A"].left())}
        where = {"Z": QPointF(z0.left(), r[f"Z{H - 1}"].bottom() + 4), "W_O": QPointF(r["W_O"].left(), wo.bottom() + 4),
                 "A": QPointF(r["A"].left(), r["A"].bottom() + 4)}
        out = []
        for block, text in self.legend_texts().items():
            static = QStaticText(formula_html(text.replace(": ", ":\u00a0")))
            static.setTextFormat(Qt.TextFormat.RichText)
            static.setTextWidth(max(widths[block], fl.horizontalAdvance("W_O: ±0.00") + 4))
            static.prepare(QTransform(), label_font)
            out.append((block, static, where[block]))
        return out

    def text_boxes(self) -> dict[str, QRectF]:
        """Where each title ("title Z", …) and legend ("legend W_O", …) is drawn, as the text's own extent."""
        boxes = {f"title {b}": box for b, _t, box in self.titles()}
        label_font = self._fonts()[1]
        for block, static, at in self.legends():
            doc = QTextDocument()  # the text's own width: QStaticText's size is its wrapping width
            doc.setDocumentMargin(0)
            doc.setDefaultFont(label_font)
            doc.setHtml(static.text())
            doc.setTextWidth(static.textWidth())
            boxes[f"legend {block}"] = QRectF(at.x(), at.y(), doc.idealWidth(), doc.size().height())
        return boxes

    # -- painting -----------------------------------------------------------------------------------
    def _paint_text(self, p, r, H: int, T: int, dh: int, D: int) -> None:
        title_font, label_font, op_font = self._fonts()
        ft, fl = QFontMetricsF(title_font), QFontMetricsF(label_font)
        fg = QColor(self.style.foreground)
        grey = QColor("#606060") if self.style.background == "#ffffff" else fg.lighter(160)
        # titles: what each block is, its shape under it in grey
        shapes = {"Z": f"{T} × {H}·{dh}", "W_O": f"{H * dh} × {D}", "A": f"{T} × {D}"}
        for block, title, box in self.titles():
            self._title(p, box.left(), box.top(), title, shapes[block], ft, fl, fg, grey)
        z0 = r["Z0"]
        p.setFont(label_font)
        p.setPen(fg)
        if "P0" in r:  # the row of patterns is named in the label column
            p.drawText(QRectF(r["labels"].left(), r["P0"].top(), r["labels"].width(), r["P0"].height()),
                       int(Qt.AlignRight | Qt.AlignVCenter), "P")
        # head numbers between P_h and Z_h, as many as fit side by side (the selected one always)
        zw = z0.width()
        every = max(1, math.ceil((fl.horizontalAdvance(str(H - 1)) + 6) / max(zw, 1e-6)))
        for h in range(H):
            # every k-th head and the selected one, never a number run into the selected one's ("1516")
            if h != self.selected and (h % every or abs(h - self.selected) < every):
                continue
            box = QRectF(r[f"Z{h}"].center().x() - zw * every / 2, z0.top() - fl.height() * 1.1,
                         zw * every, fl.height())
            p.setPen(QColor(head_colour(h)) if h == self.selected else fg)
            p.drawText(box, int(Qt.AlignCenter), ("✕" if h in self.ablated else "") + str(h))
        # token names: one per row when a line fits, else thinned (the selected query always named)
        p.setPen(fg)
        p.setFont(self.row_label_font())
        fl_rows = QFontMetricsF(self.row_label_font())
        stride = self.row_label_stride()
        lab = r["labels"]
        for i, tok in enumerate(self.q_tok):
            if i % stride and i != self.query:
                continue
            y = lab.top() + (i + 0.5) * self.row_px
            p.drawText(QRectF(lab.left(), y - fl_rows.height() / 2, lab.width(), fl_rows.height()),
                       int(Qt.AlignRight | Qt.AlignVCenter), tok)
        p.setFont(op_font)
        for name, op in zip(("op0", "op1"), self._ops()):
            p.drawText(r[name], int(Qt.AlignCenter), op)
        if "b_O" in r:
            b = r["b_O"]
            p.setFont(label_font)
            self._title(p, b.left(), b.top() - fl.height() * 1.5, "+ b_O", f"1 × {D}", fl, fl, fg, grey)
        # legends: the range of each colour scale, under its block
        p.setFont(label_font)
        p.setPen(fg)
        for _block, static, at in self.legends():
            static.prepare(p.transform(), label_font)
            p.drawStaticText(at, static)

    def _title(self, p, x, y, title, shape, ft, fl, fg, grey) -> None:
        """``title`` (W_O, b_O with a real subscript O) and its shape in grey: after a label-sized title (+ b_O),
        under a block's."""
        label_font = self._fonts()[1]
        font = self._fonts()[0] if ft is not fl else label_font
        p.setFont(font)
        p.setPen(fg)
        static = self._title_static(title, font)
        if static is not None:
            static.prepare(p.transform(), font)
            p.drawStaticText(QPointF(x, y + (ft.height() - static.size().height()) / 2), static)
            width = static.size().width()
        else:
            width = ft.horizontalAdvance(title)
            p.drawText(QRectF(x, y, width + 4, ft.height()), int(Qt.AlignLeft | Qt.AlignVCenter), title)
        p.setFont(label_font)
        p.setPen(grey)
        if ft is fl:
            p.drawText(QRectF(x + width + fl.horizontalAdvance("  "), y, fl.horizontalAdvance(shape) + 4, ft.height()),
                       int(Qt.AlignLeft | Qt.AlignVCenter), shape)
        else:
            p.drawText(QRectF(x, y + ft.height(), fl.horizontalAdvance(shape) + 4, fl.height()),
                       int(Qt.AlignLeft | Qt.AlignVCenter), shape)
