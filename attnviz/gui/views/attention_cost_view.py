"""AttentionCostView: the lecture's T² slide, measured — attention time and memory against the input length.

Two log–log plots, eager (the (H, T, T) scores materialised) against tiled (PyTorch's SDPA kernel), at
the shown model's head count and head size, measured on this machine by
:func:`attnviz.runtime.attention_cost.shared_attention_cost` when asked (the Measure button measures again;
an export or a lesson scene measures before it draws, a lesson scene on its worker thread, and its caption's
claim reads the same points). The title names the model and its shape, the notes line the machine.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem, QPushButton

from attnviz.gui.views.base import BaseView
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title

__all__ = ["AttentionCostView"]

COLOURS = {"eager": "#d55e00", "tiled": "#0072b2"}  # Okabe–Ito vermillion and blue
NAMES = {"eager": "eager: T×T scores materialised", "tiled": "tiled: SDPA kernel, never T×T"}
AXES = {"ms": "time (ms, fastest of the timed calls)", "bytes": "peak tensor memory (MB)"}


def _log_ticks(plot, lengths, values) -> None:
    """Labels only at the measured lengths and at powers of ten (pyqtgraph's log axes label every minor tick,
    which overlap); tick positions are log10 of the values, as the log-mode axes expect."""
    import math

    plot.getAxis("bottom").setTicks([[(math.log10(t), f"{t:,}") for t in lengths]])
    # room beyond the first and last length: pyqtgraph drops a tick label that would overhang the axis's end
    # ("2,048" was missing on the slide)
    span = math.log10(max(lengths) / min(lengths)) or 1.0
    plot.setXRange(math.log10(min(lengths)) - 0.06 * span, math.log10(max(lengths)) + 0.06 * span, padding=0)
    shown = [v for v in values if v == v and v > 0]
    if shown:
        lo, hi = math.floor(math.log10(min(shown))), math.ceil(math.log10(max(shown)))
        plot.getAxis("left").setTicks([[(e, f"{10.0 ** e:g}") for e in range(lo, hi + 1)]])


class AttentionCostView(BaseView):
    title = "Cost against T"

    def _build(self) -> None:
        self.title_item = make_title()
        self.figure.addItem(self.title_item, row=0, col=0)
        row = self.figure.addLayout(row=1, col=0)
        self.plots = {}
        self.legends = {}
        for i, key in enumerate(AXES):
            plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
            plot.setMouseEnabled(False, False)
            plot.hideButtons()
            plot.setLogMode(True, True)
            legend = plot.addLegend(offset=(10, 10))
            # scaled with an export like the rest of the figure (pyqtgraph's legend ignores transformations)
            legend.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations, False)
            row.addItem(plot, row=0, col=i)
            self.plots[key], self.legends[key] = plot, legend
        self.notes = make_title()
        self.figure.addItem(self.notes, row=2, col=0)
        self.cost = None
        self._shape = None  # (heads, head size) the points were measured for
        self.button = QPushButton("Measure")
        self.button.setToolTip("Time and memory of attention at this model's shape, T = 256 … 2,048, on this "
                               "machine (measured again on every press)")
        self.button.clicked.connect(self.measure)
        self.controls.addWidget(self.button)
        self.controls.addStretch(1)

    def _model_shape(self):
        from attnviz.runtime.attention_cost import trace_attention_shape

        return trace_attention_shape(self.trace)

    def _trace_changed(self) -> None:
        if self.trace is not None and self._shape != self._model_shape():
            self.cost = None  # points of another shape of model say nothing about this one
        self._draw()

    def _selection_changed(self, state, changed) -> None:
        pass  # one measurement per model shape: the selected layer or head does not change it

    def _measure_now(self, fresh: bool = False):
        from attnviz.runtime.attention_cost import shared_attention_cost

        heads, d_head = self._model_shape()
        return shared_attention_cost(heads, d_head, fresh=fresh)

    def _style_changed(self) -> None:
        self._draw()

    def measure(self) -> None:
        """Measure on a background worker (torch there, never on the GUI thread); drawn when it is back."""
        from attnviz.gui.workers import background_lane

        if self.trace is None:
            return
        self.button.setEnabled(False)
        set_title(self.title_item, "measuring eager and tiled attention at T = 256 … 2,048 …", self.style)
        shape = self._model_shape()
        background_lane().submit(("attention-cost", id(self)), lambda: self._measure_now(fresh=True), owner=self,
                                 on_result=lambda cost: self._measured(cost, shape),
                                 on_error=lambda message: self._failed(message))

    def _measured(self, cost, shape) -> None:
        self.button.setEnabled(True)
        self.cost, self._shape = cost, shape
        self._draw()

    def _failed(self, message) -> None:
        self.button.setEnabled(True)
        set_title(self.title_item, f"not measured: {message}", self.style)

    def ensure_current(self) -> None:
        """An exported figure or a lesson scene shows measured points: measure now if there are none."""
        super().ensure_current()
        if self.trace is not None and self.cost is None:
            self.cost, self._shape = self._measure_now(), self._model_shape()
            self._draw()

    def _draw(self) -> None:
        st = self.style
        for key, plot in self.plots.items():
            plot.clear()
            style_plot(plot, st, bottom="input length T (tokens)", left=AXES[key])
            self.legends[key].setLabelTextColor(st.foreground)
            self.legends[key].setLabelTextSize(f"{st.font_pt(1.0):.1f}pt")  # 12 px docked, not 10.8
        if self.trace is None:
            set_title(self.title_item, self.empty_text, self.style)
            set_title(self.notes, "", self.style, 1.0)
            return
        heads, d_head = self._model_shape()
        model_name = self.trace.description.model_name
        model = f"{model_name}'s shape: " if model_name else ""
        if self.cost is None:
            set_title(self.title_item, f"Attention cost against T ({model}{heads} heads × {d_head}): press Measure "
                                       "— measured on this machine, never estimated", self.style)
            set_title(self.notes, "", self.style, 1.0)
            return
        from attnviz.runtime.attention_cost import growth_exponent, growth_words

        c = self.cost
        for key, plot in self.plots.items():
            _log_ticks(plot, c.lengths, [v / 1e6 if key == "bytes" else v for vs in getattr(c, key).values() for v in vs])
            for name, colour in COLOURS.items():
                pairs = [(t, v / 1e6 if key == "bytes" else v) for t, v in zip(c.lengths, getattr(c, key)[name])
                         if v == v and v > 0]  # NaN: not run (log axes need v > 0)
                if pairs:
                    plot.plot([t for t, _ in pairs], [v for _, v in pairs], pen=pg.mkPen(colour, width=2 * st.line_width),
                              symbol="o", symbolSize=8 * max(1.0, st.font_scale), symbolBrush=colour,
                              symbolPen=colour, name=NAMES[name])
        eager, tiled = (growth_exponent(c.lengths, c.bytes[n]) for n in ("eager", "tiled"))
        set_title(self.title_item, f"Attention time and memory against T · {model}{heads} heads × {d_head}, one "
                                   f"layer, float32 · memory: eager grows with T {growth_words(eager)}, tiled {growth_words(tiled)}",
                  self.style)
        set_title(self.notes, f"measured on {c.machine}" + ("; " + "; ".join(c.notes) if c.notes else ""),
                  self.style, 1.0)
