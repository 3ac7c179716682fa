"""ScaleReasonView: why attention divides q·k by √d_k, as three plots against d_k.

Left: the spread (std) of q·k for random unit-variance vectors grows like √d_k; scaled it stays near 1.
Middle and right: over the selected head's number of keys, the softmax's mean top weight and its
gradient norm ‖diag(p) − ppᵀ‖ unscaled (saturating: top → 1, gradient → 0) and scaled (flat). The
selected head on this input is drawn as two points at its own d_k (unscaled ○, as run ●). Every
number comes from :func:`attnviz.analysis.scaling.scale_reason`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from attnviz.analysis.trace_parts import resolve
from attnviz.errors import AttnvizError
from attnviz.gui.views.base import BaseView
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.formula_text import subscripts_in_html  # √d_k drawn with its index below

__all__ = ["ScaleReasonView"]

RAW, SCALED = "#d55e00", "#0072b2"  # Okabe–Ito vermillion and blue: unscaled and scaled everywhere
PLOTS = (("spread", "std of q·k"), ("top", "softmax: mean top weight"), ("grad", "softmax gradient ‖diag(p) − ppᵀ‖"))


class ScaleReasonView(BaseView):
    title = "Why √d_k"

    def _build(self) -> None:
        self.title_item = make_title()
        self.figure.addItem(self.title_item, row=0, col=0)
        row = self.figure.addLayout(row=1, col=0)
        self.plots = {}
        for i, (key, _label) in enumerate(PLOTS):
            plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
            plot.setMouseEnabled(False, False)
            plot.hideButtons()
            row.addItem(plot, row=0, col=i)
            self.plots[key] = plot
        self.notes = make_title()
        self.figure.addItem(self.notes, row=2, col=0)
        self.data = None

    def _trace_changed(self) -> None:
        self._recompute()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is not None and changed & {"layer", "head", "part"}:
            self._recompute()

    def _recompute(self) -> None:
        from attnviz.analysis.scaling import scale_reason

        self.data = None
        if self.trace is not None:
            res = resolve(self.trace, self.state)
            try:
                self.data = scale_reason(self.trace, res.layer, res.head, res.part)
            except KeyError as exc:
                set_title(self.title_item, f"this trace has no queries and keys to show ({exc})", self.style)
                return
            except AttnvizError as exc:  # a stated limit (the input's length), said in one line
                self._draw()
                set_title(self.title_item, str(exc), self.style)
                return
        self._draw()

    def _style_changed(self) -> None:
        self._draw()

    def _draw(self) -> None:
        st = self.style
        for plot in self.plots.values():
            plot.clear()
        d = self.data
        if d is None:
            set_title(self.title_item, self.empty_text if self.trace is None else "", st)
            set_title(self.notes, "", st)
            return
        x = np.log2(d["d_ks"])
        ticks = dk_ticks(d["d_ks"])
        width = max(2.0, st.line_width * 1.5)
        size = 11 * max(1.0, st.font_scale)
        at = float(np.log2(d["d_k"]))
        head = {"spread": (d["head_spread_raw"], d["head_spread_scaled"]),
                "top": (d["head_top_raw"], d["head_top_scaled"]), "grad": (d["head_grad_raw"], d["head_grad_scaled"])}
        for key, label in PLOTS:
            plot = self.plots[key]
            plot.addItem(pg.PlotDataItem(x, d[f"{key}_raw"], pen=pg.mkPen(RAW, width=width)))
            plot.addItem(pg.PlotDataItem(x, d[f"{key}_scaled"], pen=pg.mkPen(SCALED, width=width)))
            raw, scaled = head[key]
            plot.addItem(pg.ScatterPlotItem([at], [raw], size=size, brush=pg.mkBrush(st.background),
                                            pen=pg.mkPen(RAW, width=2.5)))
            plot.addItem(pg.ScatterPlotItem([at], [scaled], size=size, brush=pg.mkBrush(SCALED),
                                            pen=pg.mkPen(SCALED, width=1)))
            plot.getAxis("bottom").setTicks(ticks)
            top = max(max(d[f"{key}_raw"]), max(d[f"{key}_scaled"]), raw, scaled)
            plot.setYRange(0, top * 1.08 if key == "spread" else min(1.0, top * 1.15), padding=0)
            plot.setXRange(x[0] - 0.3, x[-1] + 0.3, padding=0)
            style_plot(plot, st, bottom="d_k (log scale)", left=label)
        set_title(self.title_item, subscripts_in_html(
                  f"Why divide by √d_k: <span style='color:{RAW}'>unscaled q·k</span> vs "
                  f"<span style='color:{SCALED}'>q·k / √d_k</span> — random vectors (lines), layer {d['layer']} head "
                  f"{d['head']} on this input (points at its d_k = {d['d_k']})"), st, 1.2)
        set_title(self.notes, subscripts_in_html(
                  f"Random q, k with unit-variance components, softmax over {d['keys']} keys (this input's length). "
                  f"This head: std of q·k {d['head_spread_raw']:.2f} unscaled, {d['head_spread_scaled']:.2f} as run; "
                  f"top weight {d['head_top_scaled']:.2f} as run, {d['head_top_raw']:.2f} unscaled; gradient "
                  f"{d['head_grad_scaled']:.2f} as run, {d['head_grad_raw']:.2f} unscaled. The argument assumes "
                  f"unit-variance q and k, so it bites at large d_k from such a start (trained runs with and without "
                  f"the scale: the scale-training figure)"
                  + (f"; this head's rows barely saturate unscaled (top weight +"
                     f"{d['head_top_raw'] - d['head_top_scaled']:.2f})" if d['head_top_raw'] - d['head_top_scaled'] < 0.1
                     else "") + "."), st, 1.0)

    def figure_size(self):
        from PySide6.QtCore import QSize

        return QSize(1600, 700)


def dk_ticks(d_ks) -> list[list[tuple[float, str]]]:
    """The d_k axis's ticks at log2(d_k): powers of 4 labelled (level 0), the others unlabelled minor ticks
    (every d_k labelled, a third-wide plot ran "64128256" together; the title names the head's own d_k)."""
    major, minor = [], []
    for k in d_ks:
        v = float(np.log2(k))
        if round(v) % 2 == 0:
            major.append((v, str(int(k))))
        else:
            minor.append((v, ""))
    return [major, minor]
