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
MAX_LABELS = 300  # more text items than this is unreadable and slow


class TokenEmbeddingView(BaseView):
    title = "Token embeddings (PCA)"

    def _build(self) -> None:
        self.title_item = make_title()
        self.plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
        self.plot.hideButtons()
        self.scatter = pg.ScatterPlotItem(hoverable=True)
        self.scatter.sigClicked.connect(self._clicked)
        self.scatter.sigHovered.connect(self._hovered)
        self.marker = pg.ScatterPlotItem()
        self.plot.addItem(self.scatter)
        self.plot.addItem(self.marker)
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.plot, row=1, col=0)
        self.labels: list[pg.TextItem] = []
        self.coords: np.ndarray | None = None
        self.ratio = None
        self.source = QComboBox()
        self.source.addItems(list(SOURCES))
        self.source.currentIndexChanged.connect(lambda *_: self._trace_changed())
        self.controls.addWidget(QLabel("vectors:"))
        self.controls.addWidget(self.source)
        self.controls.addStretch(1)
        style_plot(self.plot, self.style)

    @property
    def key(self) -> str:
        return SOURCES[self.source.currentText()]

    def _trace_changed(self) -> None:
        self.coords = None
        self.scatter.clear()
        self.marker.clear()
        for item in self.labels:
            self.plot.removeItem(item)
        self.labels = []
        if self.trace is None:
            set_title(self.title_item, "no input yet", self.style)
            return
        if self.key not in self.trace:
            set_title(self.title_item, f"This model's recording has no {self.source.currentText()} vectors",
                      self.style)
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
            item = pg.TextItem(display_token(tokens[i]), color=st.foreground)
            item.setFont(st.font(0.9))
            item.setPos(x, y)
            self.plot.addItem(item)
            self.labels.append(item)
        self._place_labels()
        style_plot(self.plot, st, bottom=f"PC1 ({self.ratio[0]:.1%} of variance)",
                   left=f"PC2 ({self.ratio[1]:.1%} of variance)")
        more = f" (labels for the first {MAX_LABELS})" if len(self.coords) > MAX_LABELS else ""
        set_title(self.title_item, f"{self.source.currentText().capitalize()} of each position, "
                  f"first two principal components{more}", st)
        self.plot.autoRange(padding=0.1)  # room for the labels of the outermost points
        self._selection_changed(self.state, {"query"})

    def _ring_px(self) -> float:
        return 18 * max(1.0, self.style.font_scale)

    def _place_labels(self) -> None:
        """Each label starts just right of its dot; the selected one right of the ring around it, in
        bold, so the ring never covers its text."""
        q = self.state.query
        dot = 8 * max(1.0, self.style.font_scale)
        for i, item in enumerate(self.labels):
            selected = i == q
            item.setFont(self.style.font(0.9, bold=selected))
            gap = (self._ring_px() if selected else dot) / 2 + 3 * max(1.0, self.style.font_scale)
            width = max(item.textItem.boundingRect().width(), 1.0)
            item.setAnchor((-gap / width, 0.5))  # anchor is in text widths: −gap/width is gap pixels

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
