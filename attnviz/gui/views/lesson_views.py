"""Figures that compare runs — what-if, permutation, word order — and the whole causal mask.

:class:`PanelsView` draws a :class:`attnviz.lessons.figure_data.FigurePanels` (matrices side by side,
each with token axes and its own colour bar, and lines of measured numbers under them) through the
same :class:`LabelledHeatmap` and export path as every other view. The mask figure needs only a trace;
the others are computed from the model by :func:`figure_panels` and handed over with ``set_panels``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsPathItem
from pyqtgraph import ViewBox

from attnviz.errors import AttnvizError
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.cell_glyphs import MAX_H, cell_scale, glyph_outline
from attnviz.gui.style import colour_lut
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.legible import floor_pt, is_exporting
from attnviz.gui.widgets.title import make_title, set_title

__all__ = ["PanelsView", "CausalMaskView", "WhatIfView", "PermutationView", "WordOrderView", "figure_panels"]


class PanelsView(BaseView):
    """Matrices side by side with a title and notes; ``set_panels`` shows a computed FigurePanels."""

    title = "Comparison"
    needs_model = True
    square_cells = True  # matrices (rows and columns both tokens) keep square cells; strips may fill the room

    def _build(self) -> None:
        self.header = make_title()
        self.figure.addItem(self.header, row=0, col=0)
        self.row = self.figure.addLayout(row=1, col=0)
        self.notes = make_title()
        self.figure.addItem(self.notes, row=2, col=0)
        self.maps: list[LabelledHeatmap] = []
        self.panels = None
        self._texts: list = []  # the cell-text items drawn in the maps

    def _trace_changed(self) -> None:
        if self.trace is None:
            self.set_panels(None)
            return
        if not self.needs_model:
            self.set_panels(self._from_trace(self.trace))
        elif self.panels is None:
            set_title(self.header, f"“{self.title}” is computed from the model: export it with attnviz export "
                      "--view or show it from a scene", self.style)

    def _from_trace(self, trace):  # overridden by figures that a trace alone determines
        return None

    def _selection_changed(self, state, changed) -> None:
        if not self.needs_model and self.trace is not None and changed & {"layer", "head", "part"}:
            self._trace_changed()

    def set_panels(self, panels) -> None:
        """Show ``panels`` (a FigurePanels) or nothing."""
        self.panels = panels
        self._draw()

    def _style_changed(self) -> None:
        for m in self.maps:
            m.set_style(self.style)
        self._draw()

    def _draw(self) -> None:
        for t in self._texts:
            t.scene() and t.scene().removeItem(t)
        self._texts = []
        p = self.panels
        if p is None:
            set_title(self.header, "", self.style)
            set_title(self.notes, "", self.style)
            return
        while len(self.maps) < len(p.panels):
            sq = self.square_cells
            m = LabelledHeatmap(self.style, lock_aspect=sq, top_axis=True, centred=sq)
            m.bottom.SLANT_LINE = m.bottom.SLANT_LINE_SLIDE  # a slide's slanted keys a whole line apart
            m.vb.sigResized.connect(self._show_legible_cell_text)  # cells grow or shrink with the window
            self.row.addItem(m, row=0, col=len(self.maps))
            self.maps.append(m)
        for i, m in enumerate(self.maps):
            shown = i < len(p.panels)
            m.setVisible(shown)
            # a map without a panel (the causal mask's M folded) gives its column up: hidden, it kept its
            # minimum width (taken out of the grid instead, its axes were signalled while the scene was deleted)
            m.setMinimumWidth(-1 if shown else 0.0)  # (-1: the layout's own size again)
            m.setMaximumWidth(-1 if shown else 0.0)
        self.maps[0].share_cells(self.maps[:len(p.panels)])  # one shape, one size (the grid's columns differ)
        for m in self.maps[len(p.panels):]:  # a map given up (M folded) no longer sizes the shown ones' cells: with
            m.cell_peers = [m]  # its old peers it asked them for sizes from its zero width, and they asked it back
        set_title(self.header, p.title, self.style, 1.4)
        set_title(self.notes, "<br>".join(p.notes), self.style, 1.0)
        self._hold_notes_height()
        for m, panel in zip(self.maps, p.panels):
            values = np.asarray(panel.values, np.float64)
            img = quantize(values, panel.vmax, panel.masked, vmin=panel.vmin)
            m.set_image(img, values.shape)
            m.set_mask(panel.masked)
            m.set_levels(panel.vmin, panel.vmax, panel.label)
            m.set_labels(panel.rows, panel.cols)
            m.set_title(panel.title)
            # cells that carry their value as text (the mask's 0 / −∞) need no colour bar: its width goes to
            # the cells, so the text can be large
            bar_on = panel.cell_text is None and self.style.colour_bar
            m.bar.set_style(self.style if bar_on else replace(self.style, colour_bar=False))
            m.bar.setVisible(bar_on)
            if panel.cell_text is not None:
                self._add_cell_text(m, panel, img)
        # side by side the maps are drawn at one cell size (share_cells above), the mask M without a bar too
        self._show_legible_cell_text()

    def _add_cell_text(self, m, panel, img) -> None:
        """Write each cell's text (the mask's "0" / "−∞") as outlines in data units, so it grows with its
        cell: about half a cell high (readable from the back of a hall when the cells are), in black or white by
        the cell colour's luminance; masked cells get a box of their fill colour so the hatch lines do not cross
        the glyphs."""
        lut = colour_lut(self.style)
        masked = panel.masked if panel.masked is not None else np.zeros(img.shape, bool)
        shapes = {}  # text -> (outline at 100 px, its bounding box)
        paths = {"#000000": QPainterPath(), "#ffffff": QPainterPath()}
        boxes = QPainterPath()
        for r, row in enumerate(panel.cell_text):
            for c, text in enumerate(row):
                if text not in shapes:
                    outline = glyph_outline(text)
                    shapes[text] = (outline, outline.boundingRect())
                outline, box = shapes[text]
                k = cell_scale(box)  # cell units per font pixel
                to_cell = QTransform()
                to_cell.translate(c + 0.5, r + 0.5)
                to_cell.scale(k, k)
                to_cell.translate(-box.center().x(), -box.center().y())
                rgb = lut[int(img[r, c])][:3].astype(float)
                ink = "#000000" if float(rgb @ (0.299, 0.587, 0.114)) > 140 else "#ffffff"
                paths[ink].addPath(to_cell.map(outline))
                if masked[r, c]:
                    boxes.addRect(QRectF(c + 0.06, r + 0.18, 0.88, 0.64))  # hatch left round it: tiles, not a strip
        for path, brush, z in [(boxes, QColor(self.style.masked), 6)] + [(p, QColor(ink), 7) for ink, p in paths.items()]:
            item = QGraphicsPathItem(path)
            # an outline in the ink's colour thickens the thin strokes of "∞" (0.04 of a cell)
            pen = QPen(brush, 0.04) if z == 7 else QPen(Qt.PenStyle.NoPen)
            pen.setCosmetic(False)
            item.setPen(pen)
            item.setBrush(brush)
            item.setZValue(z)  # over the hatch (5), under the selection outlines (10)
            m.vb.addItem(item, ignoreBounds=True)
            item.setData(0, len(panel.cell_text))  # rows of its map: whether the glyphs are legible (relayout)
            self._texts.append(item)

    def _after_relayout(self) -> None:
        # square-cell maps size their axes and spare column from the geometry the first pass gave
        # them: apply the layout once more so an export re-flowed to another size has its row labels
        # beside the matrix, not over it
        maps = [m for m in self.maps if m.isVisible()]
        for i in range(4):  # maps sharing one cell size (share_cells) settle in a pass or two more
            if i == 2:  # then an export's columns are given what their matrices can use
                LabelledHeatmap.balance_widths(self.row, maps, is_exporting())
                self.row.layout.activate()
            for m in maps:
                m.layout.invalidate()
                m.layout.activate()  # the axes now have the widths their labels need at this size
                if m.lock_aspect:
                    m._fit_square()
        self._show_legible_cell_text()

    def _hold_bar_widths(self) -> None:
        """Each drawn colour bar at the width its ticks and label need at its height: a bar asked for its width
        while it was short (a two-row map's first pass) kept its many-line width (321 px for 176 at 1080 lines),
        pushed its label over the next map's row labels and the last one's past the edge (word order)."""
        for m in self.maps:
            bar = m.bar
            if m.isVisible() and bar.isVisible() and bar.style.colour_bar and bar.height() > 0:
                if bar.width() > bar.width_at(bar.height()) + 1:
                    bar.updateGeometry()  # asked again at the height it has now

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._hold_notes_height()  # the notes rewrap at the new width

    def _hold_notes_height(self) -> None:
        """The notes under the maps keep the height their lines need: the maps' tall colour bars (a two-row map's
        bar as tall as its rotated title) took the row, and at 1920×1080 the word-order notes lost their last
        three lines (the lesson's scene 12)."""
        need = self.notes.item.boundingRect().height() if self.notes.isVisible() else 0.0
        layout = self.figure.layout
        if abs(layout.rowMinimumHeight(2) - need) > 1:
            layout.setRowMinimumHeight(2, need)
            # a taller need grows the figure item past the canvas (its minimum); a smaller one later does not
            # shrink it back, as only a resize of the canvas fits the item to it: notes first laid out narrow
            # left the figure 1030 px tall in a 921 px canvas and its last three notes under the edge (scene 12)
            QTimer.singleShot(0, self, self._fit_figure_to_canvas)

    def _fit_figure_to_canvas(self) -> None:
        canvas = self.canvas
        if canvas.autoPixelRange and self.figure.geometry() != canvas.range:
            self.figure.setGeometry(canvas.range)  # clamped to the figure's minimum, as a resize would

    def _show_legible_cell_text(self) -> None:
        """Cell texts only where a glyph (half a cell high) reaches the smallest legible label: 19 tokens in a
        ~230 px map made 6 px "−∞" nobody could read; then the map's title and its hatch say what the cells
        hold. Drawn again as soon as the cells are large enough (a larger window, fewer tokens, an export)."""
        self._hold_bar_widths()
        self._hold_notes_height()
        floor_px = floor_pt(self.style, self) * 96.0 / 72.0
        for item in self._texts:
            vb = item.parentItem()  # the ViewBox's child group, then the ViewBox (in scene pixels)
            while vb is not None and not isinstance(vb, ViewBox):
                vb = vb.parentItem()
            # a cell is one data unit: its size on screen, whichever of the view box's sides the square fills (the
            # box's height over the rows called the cells of a width-bound map twice their size: 8 px "−∞" in the deck)
            cell_px = 1.0 / max(vb.viewPixelSize()) if vb is not None and min(vb.viewPixelSize()) > 0 else 0.0
            item.setVisible(cell_px * MAX_H >= floor_px)

    def figure_size(self):
        from PySide6.QtCore import QSize

        return QSize(1600, 800)


class CausalMaskView(PanelsView):
    """M | S + M | P; where M's cells are too small for its "0" / "−∞" (19 tokens on a 1280×720 projector),
    M is folded into S + M, whose hatch marks the same cells and whose title says so: M without its glyphs
    repeated that hatch, and three maps left S + M and P ~180 px wide with ~9 px labels."""

    title = "Causal mask"
    needs_model = False

    def _build(self) -> None:
        super()._build()
        self.mask_folded = False
        self._fold = (0.0, 0.0, 1)  # (canvas width, M's cell px, its rows) when M was folded: when to bring it back
        self._all_panels = None
        self._refold = QTimer(self)  # owned: a pending refold dies with the view
        self._refold.setSingleShot(True)
        self._refold.timeout.connect(self._apply_fold)

    def _from_trace(self, trace):
        from attnviz.lessons.figure_data import mask_panels

        try:
            return mask_panels(trace, self.state)
        except (KeyError, AttnvizError) as exc:
            set_title(self.header, f"no mask to show: {exc}", self.style)
            return None

    def set_panels(self, panels) -> None:
        self._all_panels = panels
        super().set_panels(self._fitted(panels))

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # a view going away (the lesson's next scene): no refold, and its maps' view boxes silent, so their
        # axes are not asked to lay out while the scene is being deleted (they read the dead scene)
        self._refold.stop()
        for m in self.maps:
            m.vb.blockSignals(True)
        super().closeEvent(event)

    def _apply_fold(self) -> None:
        if self.isVisible():
            super().set_panels(self._fitted(self._all_panels))

    def _fitted(self, p, folded: bool | None = None):
        """``p`` as drawn: without M while it is folded (S + M's title names the hatch M)."""
        folded = self.mask_folded if folded is None else folded
        if p is None or not folded or len(p.panels) < 3:
            return p
        masked = p.panels[0].masked is not None and bool(np.any(p.panels[0].masked))
        # (an encoder's M masks nothing: its title must not promise a hatch that is not drawn)
        sm = replace(p.panels[1], title=p.panels[1].title + (" (M: −∞, hatched)" if masked else " (M: all 0, none masked)"))
        return replace(p, panels=[sm] + list(p.panels[2:]))

    def _relayout(self, geom) -> None:
        """An export folds M by the screen's rule, judged at the page's own layout: laid out with M first, and
        without it where M's "0" / "−∞" would be under the page's floor (M is then the hatch S + M already
        draws). Three square maps side by side are bound by a 16:9 page's width: 19 tokens left M, S + M and P
        ~375 px tall on a 1920 × 1080 deck page with a white band above and below; two fill its height.
        Back on screen the panels are the screen's again."""
        exporting_now = is_exporting()
        if exporting_now and self._all_panels is not None and len(self._all_panels.panels) >= 3:
            self._draw_panels(self._all_panels)
            super()._relayout(geom)
            if self._texts and not any(t.isVisible() for t in self._texts):
                self._draw_panels(self._fitted(self._all_panels, folded=True))
                super()._relayout(geom)
            return
        if not exporting_now:
            self._draw_panels(self._fitted(self._all_panels))  # the screen's (a no-op unless an export changed them)
        super()._relayout(geom)

    def _draw_panels(self, panels) -> None:
        """Draw ``panels`` unless they are drawn already (drawn again, the maps' square-cell peers were asked for
        their sizes before the layout had placed them: coref's mask recursed between its maps)."""
        if panels is not self.panels:
            PanelsView.set_panels(self, panels)

    def _show_legible_cell_text(self) -> None:
        super()._show_legible_cell_text()
        if self._all_panels is None or self.canvas.width() <= 0 or not self.isVisible() or is_exporting():
            return  # (a view being closed: its maps are going; an export folds M itself: _relayout)
        floor_px = floor_pt(self.style, self) * 96.0 / 72.0
        if not self.mask_folded and self._texts:
            if not any(t.isVisible() for t in self._texts):  # M's glyphs too small: fold M
                rows = self._texts[0].data(0) or 1
                self._fold = (float(self.canvas.width()), self.maps[0].vb.sceneBoundingRect().height() / rows, rows)
                self.mask_folded = True
                self._refold.start(0)  # not inside the resize that measured it
        elif self.mask_folded:
            width, cell, n = self._fold
            # M's cells grow with the width the labels and bars leave the three maps: back once its glyphs would
            # reach the floor (a larger window). (The maps' boxes are their matrices now: a box's height over the
            # rows no longer overstates the cell, and scaled with the whole width it understated it.)
            grown = (self.canvas.width() - (width - 3 * n * cell)) / (3 * n)
            if width > 0 and grown * MAX_H >= floor_px:
                self.mask_folded = False
                self._refold.start(0)


class WhatIfView(PanelsView):
    title = "What-if"


class PermutationView(PanelsView):
    title = "Permutation"


class WordOrderView(PanelsView):
    """The two models' [CLS] rows for the typed and the swapped sentence: two strips of 2 × 10 cells. Square, their
    cells were bound by half the stage's width (~65 px at 1920×1080): the strips took its top third, the bottom 40 %
    blank. Rows of one query over positions are no T × T matrix, so their cells may be taller than wide."""

    title = "Word order"
    square_cells = False


def figure_panels(name: str, bench, scene, trace, state):
    """The FigurePanels of a model-computed figure for ``scene`` (its model, input and switches)."""
    from attnviz.lessons import figure_data as fd

    loaded = bench.model(scene.model)
    if name == "what-if":
        switches = scene.whatif_switches()
        if switches.is_default:
            raise AttnvizError("the what-if figure needs a switch: --score-scale none, --temperature, --no-causal, "
                               "--no-positions or --ablate L:H")
        return fd.whatif_panels(loaded, switches, state, text=scene.text, image=scene.image_source())
    if scene.text is None:
        raise AttnvizError(f"the {name!r} figure needs a text model and a sentence")
    if name == "permutation":
        return fd.permutation_panels(loaded, scene.text, state)
    if name == "word-order":
        return fd.word_order_panels(bench, scene.text)
    if name == "causal-mask":
        return fd.mask_panels(trace, state)
    raise AttnvizError(f"{name!r} is not a computed figure")
