"""ScaleTrainingView: the same model trained with and without 1/√d_k, curves from real runs.

Two rows (q, k initialised with unit-variance components; the model's own small initialisation) ×
three plots against the training step: validation loss, validation accuracy and the mean attention
entropy. Each seed is a thin line, the mean over seeds a thick one; unscaled runs in vermillion,
scaled in blue (the colours of the √d_k figure). Every number comes from the shipped study
(:mod:`attnviz.analysis.scale_training`, re-created by ``python -m attnviz.training.scale_study``);
the view ignores the trace's head: the study is about training, not about this input.
"""

from __future__ import annotations

import pyqtgraph as pg

from attnviz.gui.views.base import BaseView
from attnviz.gui.views.scale_reason_view import RAW, SCALED
from attnviz.gui.widgets.plot_style import plain_axes, style_plot
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.formula_text import subscripts_in_html  # √d_k drawn with its index below

__all__ = ["ScaleTrainingView"]

# each column titled by what it plots, over its top plot, and each row by how it started, in a column of its own
# left of it: rotated beside plots ~80 px tall (a lesson page at 1280×720) "validation accuracy" ran into the next
# row's title (issue 36); the titles over every plot and a row's title over the row took the plots' height
PLOTS = (("loss", "validation loss"), ("accuracy", "validation accuracy"), ("entropy", "entropy of P (nats)"))
ROWS = (("unit", "from unit-variance q, k"), ("small", "from small weights (std 0.02)"))
ROW_LINES = {"unit": "from unit-<br>variance q, k", "small": "from small<br>weights<br>(std 0.02)"}


class ScaleTrainingView(BaseView):
    title = "Training with and without √d_k"
    tab_title = "√d_k in training"

    def _build(self) -> None:
        self.title_item = make_title()
        self.figure.addItem(self.title_item, row=0, col=0)
        grid = self.figure.addLayout(row=1, col=0)
        self.plots = {}
        self.row_titles = {}
        for r, (init, _label) in enumerate(ROWS):
            # a plain label, as wide as its longest line (a title wraps to the width it is given: a letter a line)
            self.row_titles[init] = pg.LabelItem("", justify="right")
            grid.addItem(self.row_titles[init], row=r, col=0)
            for c, (key, _) in enumerate(PLOTS):
                plot = pg.PlotItem(enableMenu=False, axisItems=plain_axes())
                plot.setMouseEnabled(False, False)
                plot.hideButtons()
                grid.addItem(plot, row=r, col=c + 1)
                self.plots[init, key] = plot
        self.notes = make_title()
        self.figure.addItem(self.notes, row=2, col=0)
        self.summary = None
        self.error = ""

    def _trace_changed(self) -> None:
        from attnviz.analysis.scale_training import load_study, summarise
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
        from attnviz.analysis.scale_training import when_it_matters

        st = self.style
        for plot in self.plots.values():
            plot.clear()
        s = self.summary
        if s is None:
            set_title(self.title_item, self.error or self.empty_text, st)
            for item in [self.notes, *self.row_titles.values()]:
                set_title(item, "", st)
            return
        thick, thin = max(2.5, st.line_width * 1.8), max(1.0, st.line_width * 0.6)
        for (init, key), plot in self.plots.items():
            for scale, colour in (("unscaled", RAW), ("scaled", SCALED)):
                g = s["groups"].get((init, scale))
                if g is None:
                    continue
                faint = pg.mkColor(colour)
                faint.setAlpha(90)
                for curve in g[key]:
                    plot.addItem(pg.PlotDataItem(g["step"], curve, pen=pg.mkPen(faint, width=thin)))
                plot.addItem(pg.PlotDataItem(g["step"], g[key + "_mean"], pen=pg.mkPen(colour, width=thick)))
            if key == "accuracy":
                plot.setYRange(0, 1.02, padding=0)
            # the step named once, under the last row (the rows share it): its height goes to the plots
            style_plot(plot, st, bottom="training step" if init == ROWS[-1][0] else "")
            plot.setTitle(dict(PLOTS)[key] if init == ROWS[0][0] else None, color=st.foreground,
                          size=f"{st.font_pt():.1f}pt")
        for init, _ in ROWS:
            set_title(self.row_titles[init], f"<b>{ROW_LINES[init]}</b>", st, 1.0)
        seeds = len(next(iter(s["groups"].values()))["seeds"])
        set_title(self.title_item, subscripts_in_html(
                  f"The same model trained <span style='color:{SCALED}'>with 1/√d_k</span> and "
                  f"<span style='color:{RAW}'>without</span> at d_k {s['d_head']}: {seeds} seeds each "
                  f"(thin), their mean (thick)"), st, 1.2)
        set_title(self.notes, subscripts_in_html(when_it_matters(s) + " Task: read the first of up to 32 letters at "
                  "the last position (2 layers, 2 heads, d_model 64); validation sequences never trained on."), st, 1.0)

    def figure_size(self):
        from PySide6.QtCore import QSize

        return QSize(1600, 900)
