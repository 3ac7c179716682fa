"""Apply a ViewStyle to a pyqtgraph PlotItem (axes, fonts, labels) without touching global config."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from attnviz.gui.pyqtgraph_private import update_axis_label
from attnviz.gui.style import ViewStyle

__all__ = ["style_plot", "PlainAxisItem", "plain_axes"]


class PlainAxisItem(pg.AxisItem):
    """An axis whose numbers are the data's, always.

    pyqtgraph's automatic SI prefix multiplies tick values (0.15 → 150 "m") and, once turned off,
    keeps the last factor it chose: after a restyle a ±0.15 PCA plot read ±150. This axis never
    scales: its factor is 1 whatever the range or the label.
    """

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.autoSIPrefix = False

    def updateAutoSIPrefix(self):
        self.autoSIPrefixScale = 1.0
        self.labelUnitPrefix = ""
        update_axis_label(self)

    # numbers of a vertical axis at least this many of their lines apart
    LINES_APART = 1.5

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph's name
        """pyqtgraph's spacing, with a vertical axis' numbered ticks far enough apart for their type: it picks
        by the axis' length alone, and a presented 0–1 axis ~80 px tall wrote "1.0 0.8 0.6 0.4 0.2 0" over each
        other (the √d_k training curves at 1216×662). Finer levels stay as unnumbered ticks."""
        levels = super().tickSpacing(minVal, maxVal, size)
        if self.orientation not in ("left", "right") or size <= 0 or maxVal <= minVal or not levels:
            return levels
        font = self.style.get("tickFont") or self.font()
        least = QFontMetricsF(font).height() * self.LINES_APART * (maxVal - minVal) / size  # in data units
        if levels[0][0] >= least:
            return levels
        e = math.floor(math.log10(least))
        major = min(m * 10.0 ** k for k in (e, e + 1) for m in (1, 2, 5) if m * 10.0 ** k >= least)
        return [(major, 0)] + [lv for lv in levels if lv[0] < major and lv[0] * size / (maxVal - minVal) >= 4][:1]


def plain_axes() -> dict:
    """``axisItems`` for a PlotItem whose left and bottom numbers equal the data."""
    return {"left": PlainAxisItem("left"), "bottom": PlainAxisItem("bottom")}


def style_plot(plot: pg.PlotItem, style: ViewStyle, bottom: str = "", left: str = "") -> None:
    """Colours, tick fonts and axis labels of ``plot`` from ``style``."""
    css = {"color": style.foreground, "font-size": f"{style.font_pt():.1f}pt"}  # pyqtgraph wants CSS keys
    for name in ("left", "bottom"):
        ax = plot.getAxis(name)
        ax.setPen(pg.mkPen(style.foreground, width=max(1.0, style.line_width * 0.7)))
        ax.setTextPen(pg.mkPen(style.foreground))
        ax.setTickFont(QFont(style.font()))  # the axis keeps it: give it its own copy
        if not isinstance(ax, PlainAxisItem):
            ax.enableAutoSIPrefix(False)  # "(x0.001)" in an axis title confuses more than it helps
    # the bottom axis does not grow with its font by itself: tick labels would be cut off
    fm = style.metrics()
    plot.getAxis("bottom").setHeight(int(fm.height() * (2.8 if bottom else 1.6)) + 6)
    plot.getAxis("left").setWidth(int(fm.horizontalAdvance("−0.000") + fm.height() * (2.4 if left else 0.5)) + 8)
    from attnviz.gui.widgets.formula_text import subscripts_in_html  # "d_k (log scale)" drawn as d with k below

    if bottom:
        plot.setLabel("bottom", subscripts_in_html(bottom), **css)
    if left:
        plot.setLabel("left", subscripts_in_html(left), **css)
