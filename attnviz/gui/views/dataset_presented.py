"""The data-set view presented (F5, a lesson's scene): the figure alone — the head grid and the mean map with their
titles, colour bars and caption — on the whole slide.

Presenting hid only the controls row: the table and the list of top inputs under the figure stayed, and at 1280×720
the figure got the top ~60 % of the slide (head grid ~215 × 230 px, mean map ~220 px) over a table cut by its own
scroll bar (issue 36). The table and the list belong to the docked view; presented, the splitter's lower half, its
Table button and the notice over the figure (its caption says the same) step aside and the figure takes their height;
they come back as they were on leaving.
"""

from __future__ import annotations

import math

from attnviz.gui.views.dataset_pages import ROW_PX
from attnviz.gui.views.dataset_split import HEAD_PX

__all__ = ["PresentedFigureOnly"]


class PresentedFigureOnly:
    """Mixed into DatasetView (its ``split``, ``below`` and ``split_below``)."""

    def set_controls_visible(self, on: bool) -> None:
        """Figure first (``on`` False): the controls row (the base view's) and the table with the top inputs hide."""
        super().set_controls_visible(on)
        split = self.split
        split.presented = not on
        # a page's rows and columns as tall and wide as a cell's number in the presented type (1.0 of the style's:
        # dataset_widgets.CELL_FONT_FACTORS): at the docked 18 px a row, 30 × 9 presented hid every number
        metrics = self.style.metrics(1.0)
        split.row_px = ROW_PX if on else max(ROW_PX, math.ceil(metrics.height()) + 2)
        split.head_px = HEAD_PX if on else max(HEAD_PX, math.ceil(metrics.horizontalAdvance("0.00")) + 6)
        self.below.setVisible(on)
        self._parts.figure_only = not on
        self._parts.show_notice(self._parts.notice.text())
        self.split_below()
