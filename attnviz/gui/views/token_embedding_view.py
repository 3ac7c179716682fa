"""TokenEmbeddingView: the input vectors projected on their first two principal components, labelled."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QLabel

from attnviz.analysis import compute_embedding_pca
from attnviz.errors import AttnvizError
from attnviz.gui.views.base import BaseView
from attnviz.analysis.trace_parts import format_value
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.token_axis import display_token

__all__ = ["TokenEmbeddingView"]

SOURCES = {"token embedding": "emb.token", "position encoding": "emb.pos", "token + position": "emb.sum"}


def offered_vectors(trace) -> dict[str, str]:
    """The vectors the "vectors:" box offers for ``trace`` (name → key), named for what the model reads: a
    vision model's are patch embeddings (the box said "token embedding" over a "Patch embedding" title), and a
    model with no position vectors (rotary, e.g. Llama) is not offered them only to be told they are missing."""
    if trace is None:
        return dict(SOURCES)
    unit = "patch" if trace.grid is not None else "token"
    return {name.replace("token", unit): key for name, key in SOURCES.items() if key in trace}
MAX_LABELS = 300  # more text items than this is unreadable and slow


class TokenEmbeddingView(BaseView):
    title = "Token embeddings (PCA)"
    tab_title = "Embeddings"  # the dock's tab: twelve tabs fit a 1920-px window without scrolling

    def _build(self) -> None:
        self.title_item = make_title()
        self.plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
        self.plot.hideButtons()
        self.scatter = pg.ScatterPlotItem(hoverable=True)
        self.scatter.sigClicked.connect(self._clicked)
        self.scatter.sigHovered.connect(self._hovered)
        self.marker = pg.ScatterPlotItem()
        self.leaders = pg.PlotDataItem(connect="pairs")  # from a point to its label placed away from it
        self.plot.addItem(self.leaders, ignoreBounds=True)
        self.plot.addItem(self.scatter)
        self.plot.addItem(self.marker)
        self.placements: list = []  # label_layout.Placement or None (left out, or named by a group) per label
        self.groups: list[list[int]] = []  # indices of identical points of one token: one label each
        self.hidden_labels = 0
        self._placing = False
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.plot, row=1, col=0)
        self.labels: list[pg.TextItem] = []
        self.coords: np.ndarray | None = None
        self.ratio = None
        self.source = QComboBox()
        for name, key in SOURCES.items():
            self.source.addItem(name, key)
        self.source.currentIndexChanged.connect(lambda *_: self._trace_changed())
        self.controls.addWidget(QLabel("vectors:"))
        self.controls.addWidget(self.source)
        self.controls.addStretch(1)
        style_plot(self.plot, self.style)
        # labels are placed in pixels: a new size or range places them again
        self.plot.vb.sigResized.connect(lambda *_: self._place_labels())
        self.plot.vb.sigRangeChanged.connect(lambda *_: self._place_labels())

    @property
    def key(self) -> str:
        return self.source.currentData()

    def _offer(self) -> None:
        """The box offers this model's vectors, keeping the chosen kind where the model has it."""
        offered = offered_vectors(self.trace)
        box = self.source
        if [(box.itemText(i), box.itemData(i)) for i in range(box.count())] == list(offered.items()):
            return
        key = box.currentData()
        was = box.blockSignals(True)  # _trace_changed draws once, after
        box.clear()
        for name, k in offered.items():
            box.addItem(name, k)
        box.setCurrentIndex(max(0, box.findData(key)))
        box.blockSignals(was)

    def _trace_changed(self) -> None:
        self._offer()
        self.coords = None
        self.scatter.clear()
        self.marker.clear()
        for item in self.labels:
            self.plot.removeItem(item)
        self.labels, self.placements, self.groups = [], [], []
        self.leaders.setData([], [])
        if self.trace is None:
            set_title(self.title_item, self.empty_text, self.style)
            return
        if self.key is None or self.key not in self.trace:
            set_title(self.title_item, "This model's recording has no embedding vectors", self.style)
            return
        emb = np.asarray(self.trace[self.key], dtype=np.float64)  # (T, D)
        try:
            self.coords, self.ratio = compute_embedding_pca(emb, 2)
        except AttnvizError as exc:
            set_title(self.title_item, str(exc), self.style)
            return
        if self.coords.shape[1] < 2:  # one component only: put everything on a line
            self.coords = np.concatenate([self.coords, np.zeros_like(self.coords)], axis=1)
            self.ratio = np.append(self.ratio, 0.0)
        self._draw()

    def _draw(self) -> None:
        st = self.style
        tokens = self.trace.tokens
        self.scatter.setData(pos=self.coords, data=np.arange(len(self.coords)), size=8 * max(1.0, st.font_scale),
                             brush=pg.mkBrush("#4477AA"), pen=pg.mkPen(st.foreground, width=0.5))
        for item in self.labels:
            self.plot.removeItem(item)
        self.labels = []
        for i, (x, y) in enumerate(self.coords[:MAX_LABELS]):
            item = pg.TextItem(display_token(tokens[i]), color=st.foreground, anchor=(0, 0))
            item.setFont(st.font(1.0))  # 12 px docked (0.9 drew 10.8 px); crowded labels are left out instead
            item.setPos(x, y)
            self.plot.addItem(item, ignoreBounds=True)  # the points set the range; labels fit inside it
            self.labels.append(item)
        # identical points of the same token (a character model's every "e"): one label, "e ×5"
        groups: dict = {}
        for i in range(len(self.labels)):
            groups.setdefault((display_token(tokens[i]), *self.coords[i].tolist()), []).append(i)
        self.groups = list(groups.values())
        # leaders in grey: they join, the points and labels are what is read
        self.leaders.setPen(pg.mkPen("#909090", width=max(1.0, 0.5 * st.line_width)))
        style_plot(self.plot, st, bottom=f"PC1 ({self.ratio[0]:.1%} of variance)",
                   left=f"PC2 ({self.ratio[1]:.1%} of variance)")
        self.hidden_labels = 0
        self._set_title()
        self.plot.autoRange(padding=0.12)  # room for the labels of the outermost points
        self._selection_changed(self.state, {"query"})

    def _set_title(self) -> None:
        more = f"; labels for the first {MAX_LABELS}" if len(self.coords) > MAX_LABELS else ""
        crowd = (f"; {self.hidden_labels} labels left out where points crowd (hover a point for its name)"
                 if self.hidden_labels else "")
        what, each = self.source.currentText(), "position"
        if self.trace is not None and self.trace.grid is not None:  # a ViT: its tokens are image patches
            each = "patch ([CLS] and row,col)"
        set_title(self.title_item, f"{what.capitalize()} of each {each}, "
                  f"first two principal components{more}{crowd}", self.style)

    def _ring_px(self) -> float:
        return 18 * max(1.0, self.style.font_scale)

    def _dot_px(self) -> float:
        return 8 * max(1.0, self.style.font_scale)

    def _after_relayout(self) -> None:
        self._place_labels()  # an export lays the figure out at another size

    def _place_labels(self) -> None:
        """No two labels overlap (:func:`~attnviz.gui.widgets.label_layout.place_labels`): beside their
        dot when there is room, else further out with a leader line, else left out (hover names the
        point). The selected label is placed first, in bold, clear of the ring around its dot."""
        if self._placing or self.coords is None or not self.labels:
            return
        vb = self.plot.vb
        W, H = vb.width(), vb.height()
        if W < 2 or H < 2:
            return
        self._placing = True
        try:
            self._place_in(vb.viewRect(), W, H)
        finally:
            self._placing = False

    def _place_in(self, r, W: float, H: float) -> None:
        from attnviz.gui.widgets.label_layout import place_labels

        q = self.state.query
        sx, sy = W / max(r.width(), 1e-300), H / max(r.height(), 1e-300)
        pts = self.coords[:len(self.labels)]
        px = np.column_stack([(pts[:, 0] - r.left()) * sx, (r.bottom() - pts[:, 1]) * sy])
        tokens = self.trace.tokens
        # one label per group of identical points: the selected point's, else the first
        shown = [q if q in g else g[0] for g in self.groups]
        sizes = []
        for i, g in zip(shown, self.groups):
            item = self.labels[i]
            item.setText(display_token(tokens[i]) + (f" ×{len(g)}" if len(g) > 1 else ""))
            item.setFont(self.style.font(1.0, bold=i == q))
            # the selected label may sit over other dots: it brings its own background
            item.fill = pg.mkBrush(self.style.background) if i == q else pg.mkBrush(None)
            item.update()
            b = item.textItem.boundingRect()
            sizes.append((b.width(), b.height()))
        sel = shown.index(q) if q in shown else None
        ring = self._ring_px() / 2
        reserved = [] if sel is None else [(px[q, 0] - ring, px[q, 1] - ring, px[q, 0] + ring, px[q, 1] + ring)]
        placed = place_labels(px[shown], sizes, radius=self._dot_px() / 2, bounds=(0, 0, W, H), first=sel,
                              reserved=reserved)
        self.placements = [None] * len(self.labels)
        for i, p in zip(shown, placed):
            self.placements[i] = p
        lines_x, lines_y = [], []
        for i, (item, p) in enumerate(zip(self.labels, self.placements)):
            item.setVisible(p is not None)
            if p is None:
                continue
            item.setPos(r.left() + p.left / sx, r.bottom() - p.top / sy)
            if p.leader:
                ex, ey = p.nearest_point(*px[i])
                lines_x += [pts[i, 0], r.left() + ex / sx]
                lines_y += [pts[i, 1], r.bottom() - ey / sy]
        self.leaders.setData(lines_x, lines_y)
        hidden = sum(p is None for p in placed)  # merged duplicates are named by their group's label
        if hidden != self.hidden_labels:
            self.hidden_labels = hidden
            self._set_title()

    def _selection_changed(self, state, changed) -> None:
        if self.coords is None or "query" not in changed:
            return
        self._place_labels()
        q = state.query
        if q is None or q >= len(self.coords):
            self.marker.clear()
            return
        self.marker.setData([self.coords[q, 0]], [self.coords[q, 1]], size=self._ring_px(),
                            brush=None, pen=pg.mkPen(self.style.foreground, width=2 * self.style.line_width))

    def _style_changed(self) -> None:
        style_plot(self.plot, self.style)
        if self.coords is not None:
            self._draw()

    def point_text(self, i: int) -> str:
        x, y = self.coords[i]
        return f"{display_token(self.trace.tokens[i])} [{i}]: PC1 {format_value(x)}, PC2 {format_value(y)}"

    def _clicked(self, item, points, ev=None) -> None:
        if len(points) and self.selection is not None:
            self.selection.update(query=int(points[0].data()))

    def _hovered(self, item, points, ev=None) -> None:
        self.set_hover_text(self.point_text(int(points[0].data())) if len(points) else "")
