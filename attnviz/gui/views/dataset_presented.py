"""The data-set view presented (F5, a lesson's scene): the figure alone — the head grid and the mean map with their
titles, colour bars and caption — on the whole slide.

Presenting hid only the controls row: the table and the list of top inputs under the figure stayed, and at 1280×720
the figure got the top ~60 % of the slide (head grid ~215 × 230 px, mean map ~220 px) over a table cut by its own
scroll bar (issue 36). The table and the list belong to the docked view; presented, the splitter's lower half and its
Table button step aside and the figure takes their height, and they come back as they were on leaving.
"""

from __future__ import annotations

__all__ = ["PresentedFigureOnly"]


class PresentedFigureOnly:
    """Mixed into DatasetView (its ``split``, ``below`` and ``split_below``)."""

    def set_controls_visible(self, on: bool) -> None:
        """Figure first (``on`` False): the controls row (the base view's) and the table with the top inputs hide."""
        super().set_controls_visible(on)
        self.split.presented = not on
        self.below.setVisible(on)
        self.split_below()
