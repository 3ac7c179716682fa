"""PathLengthView: an RNN and a transformer trained on the same long-range task, side by side.

Three plots against the distance d between a token and the position that reads the answer: the
sequential steps between them (RNN: d recurrent steps; attention: one step), the held-out accuracy
when the answer lies d tokens back, and ‖∂ logit / ∂ x_t‖ (log scale) after training (solid) and at
initialisation (dashed). Accuracy: mean over seeds; gradients: median over seeds. Every number comes from the shipped study
(:mod:`attnviz.analysis.path_length`, re-created by ``python -m attnviz.training.path_length_study``);
the view ignores the trace: the study is about the two architectures, not about this input.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from attnviz.gui.views.base import BaseView
from attnviz.gui.views.scale_reason_view import RAW, SCALED
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title

__all__ = ["PathLengthView"]

COLOURS = {"rnn": RAW, "attention": SCALED}
NAMES = {"rnn": "RNN (tanh)", "attention": "self-attention (2 layers)"}
PLOTS = (("steps", "sequential steps between them"), ("accuracy", "held-out accuracy"),
         ("grad", "‖∂ logit / ∂ x_t‖ (log₁₀)"))


class PathLengthView(BaseView):
    title = "Path length: RNN vs attention"
    tab_title = "Path length"

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
        self.summary = None
        self.error = ""

    def _trace_changed(self) -> None:
        from attnviz.analysis.path_length import load_study, summarise
        from attnviz.errors import AttnvizError

        self.summary, self.error = None, ""
        try:
            self.summary = summarise(load_study())
        except AttnvizError as exc:  # a missing or damaged study file: a notice, not a traceback
            self.error = str(exc)
        self._draw()

    def _style_changed(self) -> None:
        self._draw()

    def _draw(self) -> None:
        from attnviz.analysis.path_length import sequential_steps

        st = self.style
        for plot in self.plots.values():
            plot.clear()
        s = self.summary
        if s is None:
            set_title(self.title_item, self.error or self.empty_text, st)
            set_title(self.notes, "", st)
            return
        d = s["distances"]
        width = max(2.5, st.line_width * 1.8)
        steps = sequential_steps(d)
        for name, m in s["models"].items():
            colour = COLOURS[name]
            self.plots["steps"].addItem(pg.PlotDataItem(d, steps[name], pen=pg.mkPen(colour, width=width)))
            self.plots["accuracy"].addItem(pg.PlotDataItem(d, m["accuracy_mean"], pen=pg.mkPen(colour, width=width)))
            # gradients span 10 orders of magnitude between seeds: the median, not a mean one seed dominates
            for key, dash in (("grad", Qt.PenStyle.SolidLine), ("grad_init", Qt.PenStyle.DashLine)):
                y = np.log10(np.maximum(np.median(m[key], 0), 1e-30))
                self.plots["grad"].addItem(pg.PlotDataItem(d, y, pen=pg.mkPen(colour, width=width, style=dash)))
        self.plots["accuracy"].setYRange(0, 1.02, padding=0)
        for key, label in PLOTS:
            style_plot(self.plots[key], st, bottom="distance d to the read-out (tokens)", left=label)
        seeds = len(s["models"]["rnn"]["seeds"])
        set_title(self.title_item,
                  f"The same task, two architectures: <span style='color:{RAW}'>{NAMES['rnn']}</span> vs "
                  f"<span style='color:{SCALED}'>{NAMES['attention']}</span> — read the first letter at the last "
                  f"position ({seeds} seeds each: accuracy mean, gradients median)", st, 1.2)
        rnn, att = s["models"]["rnn"], s["models"]["attention"]
        far = s["far_from"]
        set_title(self.notes,
                  f"An RNN carries a token d steps to the read-out; attention reaches it in one. Held-out accuracy "
                  f"with the answer ≥ {far:.0f} tokens back: RNN {rnn['far_accuracy'].mean():.0%}, attention "
                  f"{att['far_accuracy'].mean():.0%}. Gradient reaching the farthest token relative to the nearest, "
                  f"at initialisation (dashed): RNN {np.median(rnn['grad_ratio_init']):.0e}, attention "
                  f"{np.median(att['grad_ratio_init']):.2g}; trained (solid): RNN {np.median(rnn['grad_ratio']):.2g}, "
                  f"attention {np.median(att['grad_ratio']):.2g} (medians over seeds).", st, 1.0)

    def figure_size(self):
        from PySide6.QtCore import QSize

        return QSize(1600, 700)
