"""AttentionDistanceView: mean attention distance of every head against depth (ViT paper, figure 7 right).

One point per head and layer; early layers of a trained ViT mix near and far heads, later layers
look far. Distances come from :func:`attnviz.analysis.mean_attention_distance` (pixels for images,
tokens for text), computed off the GUI thread. Clicking a point selects that layer and head.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from attnviz.gui.style import HEAD_COLOURS, head_colour
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.model_summary import HeadStats, summarize_stats
from attnviz.analysis.trace_parts import part_name, resolve
from attnviz.gui.widgets.legible import layout_scale
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title

__all__ = ["AttentionDistanceView", "POINT_PX"]

POINT_PX = 12.0  # a point's diameter in layout pixels at font scale 1: as large as the legend's marker


SPREAD = 0.6  # the share of a layer's slot its heads are spread over: equal distances do not hide each other
MARGIN = 0.65  # x-axis room past the first and last layer's centres: their outer heads and the ring round them
CROWDED = 0.3  # at most this share of a layer's slot per point: many layers (30 × 9) keep a gap between layers


def _offsets(n_heads: int) -> np.ndarray:
    # (0.5 left coref's 12-px points touching in a 560-px dock)
    return (np.arange(n_heads) - (n_heads - 1) / 2) * (SPREAD / max(n_heads, 1))


class AttentionDistanceView(BaseView):
    title = "Attention distance"

    def _build(self) -> None:
        self.title_item = make_title()
        self.plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.scatter = pg.ScatterPlotItem(hoverable=True)
        self.scatter.sigClicked.connect(self._clicked)
        self.scatter.sigHovered.connect(self._hovered)
        self.marker = pg.ScatterPlotItem()
        self.plot.addItem(self.scatter)
        self.plot.addItem(self.marker)
        self.legend = pg.LegendItem(offset=(-10, 10))  # which colour is which head
        self.legend.setParentItem(self.plot.vb)
        # pyqtgraph's legend ignores transformations: an export, laid out at 1067×600 and drawn ×1.8, drew it
        # at the layout's pixel size (its labels ~9 px on a 1920×1080 slide). It hangs on the ViewBox itself,
        # not the data group, so on screen nothing scales it either way.
        self.legend.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations, False)
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.plot, row=1, col=0)
        self.stats: HeadStats | None = None
        self.res = None
        self._fitting = False
        # the legend's columns, the headroom and the points' size follow the plot's size
        self.plot.vb.sigResized.connect(self._fit_legend)
        self.plot.vb.sigResized.connect(self._size_points)
        self._apply_style()

    def _trace_changed(self) -> None:
        self.stats = None
        self.scatter.clear()
        self.marker.clear()
        if self.trace is None:
            set_title(self.title_item, self.empty_text, self.style)
            return
        self.res = resolve(self.trace, self.state)
        part = "self" if self.res.part == "cross" else self.res.part
        trace = self.trace
        set_title(self.title_item, "computing mean attention distances…", self.style)
        self.run_in_background(lambda: summarize_stats(trace, part), self._ready)

    def set_stats(self, stats: HeadStats) -> None:
        """Show statistics computed elsewhere for the current trace."""
        self.stats = stats
        self._draw()

    def _ready(self, result) -> None:
        if isinstance(result, Exception):
            set_title(self.title_item, f"distances unavailable: {result}", self.style)
            return
        self.set_stats(result)

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        old = self.res
        self.res = resolve(self.trace, state)
        if old is not None and old.part != self.res.part and "enc" in (old.part, self.res.part):
            self._trace_changed()
        else:
            self._draw_marker()

    def points(self) -> np.ndarray:
        """(L·H, 4) rows of (x, distance, layer, head) as plotted."""
        d = self.stats.distance  # (L, H)
        L, H = d.shape
        layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
        x = layer + _offsets(H)[None, :]
        return np.stack([x.ravel(), d.ravel(), layer.ravel(), head.ravel()], axis=1)

    def _draw(self) -> None:
        if self.stats is None or self.stats.distance is None:
            return
        pts = self.points()
        size = self._point_size()
        spots = [{"pos": (x, y), "data": (int(layer), int(h)), "size": size,
                  "brush": pg.mkBrush(head_colour(int(h))), "pen": pg.mkPen(self.style.foreground, width=0.5)}
                 for x, y, layer, h in pts]
        self.scatter.setData(spots)
        # the legend's samples are drawn in layout pixels (scaled with an export), the points in page pixels
        self._draw_legend(int(pts[:, 3].max()) + 1, POINT_PX * max(1.0, self.style.font_scale))
        L = self.stats.distance.shape[0]
        self.plot.getAxis("bottom").setTicks([[(i, str(i)) for i in range(L)]])
        self.plot.setXRange(-MARGIN, L - 1 + MARGIN, padding=0)
        self._fit_legend()
        unit = self.stats.distance_unit
        style_plot(self.plot, self.style, bottom="layer (network depth)", left=f"mean attention distance ({unit})")
        repeat = f"; colours repeat every {len(HEAD_COLOURS)} heads" if pts[:, 3].max() >= len(HEAD_COLOURS) else ""
        # a two-stack model measures one stack: say which (cross-attention has no distance: its rows and
        # columns are positions of two different sequences, so the decoder's self-attention stands in)
        part = "self" if self.res.part == "cross" else self.res.part
        two = len(self.trace.parts) > 1
        which = f" · {part_name(part, two)}" if two else ""
        set_title(self.title_item, f"Mean attention distance per head{which} (one point per head, coloured by "
                  f"head{repeat})", self.style)
        self._draw_marker()

    def _point_size(self, ring: float = 1.0) -> float:
        """A point's diameter in the pixels it is drawn in: pyqtgraph draws pxMode symbols after resetting the
        painter's transform, so an export drawn ×1.8 (a 1920×1080 slide) drew 9-px dots beside the legend's
        16-px markers; they are scaled here with the export's layout scale, as the legend is by the painter."""
        size = POINT_PX * max(1.0, self.style.font_scale)
        if self.stats is not None and self.stats.distance is not None and self.plot.vb.width() > 0:
            # a layer's slot in layout pixels: 30 layers' points at full size ran into the next layer's
            slot = self.plot.vb.width() / (self.stats.distance.shape[0] - 1 + 2 * MARGIN)
            size = min(size, max(6.0, CROWDED * slot))
        return ring * size * layout_scale()

    def _size_points(self) -> None:
        """The points (and the ring round the selected one) at the size for the plot's width and the scale drawn."""
        if self.stats is not None and self.stats.distance is not None and len(self.scatter.data):
            self.scatter.setSize([self._point_size()] * len(self.scatter.data))
            self._draw_marker()

    def _after_relayout(self) -> None:
        self._size_points()  # laid out for a file, or back on screen

    def _draw_legend(self, n_heads: int, size: float) -> None:
        st = self.style
        self.legend.clear()
        self.legend.setLabelTextColor(st.foreground)
        # the base size, 12 px docked: the "head N" labels at 0.9 were 10.8 px, under what a back row reads
        self.legend.setLabelTextSize(f"{st.font_pt(1.0):.1f}pt")
        # one entry a colour: past nine heads the colours repeat, and an entry per head ("head 0" … "head 13")
        # gave two heads one colour under two names; the entry names every head of its colour instead
        cycle = len(HEAD_COLOURS)
        for c in range(min(n_heads, cycle)):
            heads = list(range(c, n_heads, cycle))
            sample = pg.ScatterPlotItem(size=size, brush=pg.mkBrush(head_colour(c)),
                                        pen=pg.mkPen(st.foreground, width=0.5))
            self.legend.addItem(sample, f"head {c}" if len(heads) == 1 else "heads " + ", ".join(map(str, heads)))

    def _fit_legend(self, *_args) -> None:
        """As many legend entries a row as the plot's width holds, and headroom above the highest point for
        its rows: eight a row ran past the plot's left edge at 1280×720 ("ead 1", head 0 cut off) and its
        second row sat on the points of a 30 × 9 model."""
        if self.stats is None or self.stats.distance is None or self._fitting:
            return
        vb = self.plot.vb
        width, height = vb.width(), vb.height()
        if width <= 0 or height <= 0:
            return
        self._fitting = True
        try:
            n = len(self.legend.items)
            cols = max(1, min(n, 8))
            self.legend.setColumnCount(cols)
            while cols > 1 and self.legend.boundingRect().width() > width - 20:  # its 10 px offset, each side
                cols -= 1
                self.legend.setColumnCount(cols)
            top = max(float(np.nanmax(self.stats.distance)), 1e-6)
            # the legend's rows (and its 10 px offset) take this share of the height: the points stay under it
            # (and half the selection ring: it touched the legend's row)
            ring = self._point_size(ring=2.0) / max(layout_scale(), 1e-6)
            share = min(0.6, (self.legend.boundingRect().height() + 16 + ring / 2) / height)
            # the axis starts at 0 (no distance) on purpose: a mean distance is a ratio quantity, and the slide's
            # point is how far heads look, not how they differ in the second digit; an axis fitted to coref's 3.9-4.3
            # tokens would draw its layers as "near" and "far" heads that differ by a tenth
            self.plot.setYRange(0, max(top * 1.1, top / (1 - share)), padding=0)
        finally:
            self._fitting = False

    def _draw_marker(self) -> None:
        if self.stats is None or self.stats.distance is None or self.res is None:
            self.marker.clear()
            return
        L, H = self.stats.distance.shape
        layer, head = min(self.res.layer, L - 1), min(self.res.head, H - 1)
        x = layer + _offsets(H)[head]
        size = self._point_size(ring=2.0)
        self.marker.setData([x], [self.stats.distance[layer, head]], size=size, brush=None,
                            pen=pg.mkPen(self.style.foreground, width=2 * self.style.line_width))

    def _apply_style(self) -> None:
        style_plot(self.plot, self.style)

    def _style_changed(self) -> None:
        self._apply_style()
        self._draw()

    def point_text(self, layer: int, head: int) -> str:
        return (f"layer {layer} · head {head}: mean distance {self.stats.distance[layer, head]:.4f} "
                f"{self.stats.distance_unit}")

    def _clicked(self, item, points, ev=None) -> None:
        if len(points) and self.selection is not None:
            layer, head = points[0].data()
            self.selection.update(layer=layer, head=head)

    def _hovered(self, item, points, ev=None) -> None:
        self.set_hover_text(self.point_text(*points[0].data()) if len(points) else "")
