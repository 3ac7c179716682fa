"""Apply a ViewStyle to a pyqtgraph PlotItem (axes, fonts, labels) without touching global config."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFont

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
