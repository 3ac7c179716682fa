"""The All heads grid presented (F5, a lesson's scene): a grid that fits on one page takes the slide.

Presented at 1280×720, translate's 2 × 2 grid sat in the left 47 % of the slide with ~650 px blank at the right, its
tiles ~195 px and the numbers under them ~12 px (issue 36). A small grid on a wide slide is bound by the height, and
the docked pitch gives each row 0.42 of a tile for a line of text: 80 px at that size. Presented, one page of the whole
grid gets a row pitch that holds its number's line and no more (so the tiles grow), its numbers at the size of the
axis labels, and the width it cannot use split either side (centred). A grid shown a page at a time keeps the docked
pitch and note size, which its pages are fitted for (all_heads_pages.py).

A mixin of :class:`~attnviz.gui.views.model_view.ModelView`, with :class:`~.all_heads_pages.GridPages`.
"""

from __future__ import annotations

from attnviz.gui.views.all_heads_pages import NOTE_FACTOR, NOTE_Y, PITCH_X, PITCH_Y
from attnviz.gui.views.grid_notes import DOC_MARGIN

__all__ = ["PresentedGrid", "PRESENTED_NOTE_FACTOR", "NOTE_PAD_PX"]

PRESENTED_NOTE_FACTOR = 1.0  # presented, one page: the axis labels' size (0.8 of it read ~12 px at 1280×720)
NOTE_PAD_PX = 4.0  # under a note's line, before the next row's selection frame
FRAME_REACH = 0.04  # how far the selection frame reaches out of its tile (tile units; all_heads_pages._mark_selected)
TAIL = 0.08  # the range's height beyond its rows' pitches (the top's 0.06 and a margin): 1.42 + 0.08 docked


def frame_pen_px(style) -> float:
    """The selection frame's outer (black) pen in px (ModelView._apply_style)."""
    return 1.5 * style.line_width + 2


class PresentedGrid:
    """Pitch, note size and centring of the All heads grid when presented (mixed into ModelView)."""

    _pitch_y = PITCH_Y  # the rows' pitch in use (tile units); the docked one until presented
    _controls_on = True  # False while the figure is presented alone (set_controls_visible)

    @property
    def presented(self) -> bool:
        """Whether the view is drawn in the presentation style (presenting, or a lesson's scene)."""
        return self.style.preset == "presentation"

    def one_page_presented(self) -> bool:
        """Presented, and the whole grid on one page at the docked pitch (what a page fits is not changed)."""
        L, H = getattr(self, "_grid_shape", (0, 0))  # (also while _build runs)
        return self.presented and L > 0 and self.page_shape() == (L, H)

    def note_base_factor(self) -> float:
        return PRESENTED_NOTE_FACTOR if self.one_page_presented() else NOTE_FACTOR

    def wanted_pitch_y(self) -> float:
        """The rows' pitch: the docked PITCH_Y, or presented on one page the tile and its number's line. A tile of t px
        in V px over L rows: t · (reach · L + TAIL) + L · g = V (reach: the note's anchor and the frame's reach in
        tile units; g: the note's line, the frame's pen and a pad in px)."""
        if not self.one_page_presented():
            return PITCH_Y
        L, H = self._grid_shape
        avail_w, avail_h = self.grid_room()
        # the note's line, and the next row's selection frame reaching 0.04 of a tile above its tile with its pen
        # (with a pad): at a 6-px pad alone the thick presented frame ran over the number above it
        reach = NOTE_Y + FRAME_REACH
        g = DOC_MARGIN + self.style.metrics(self.note_base_factor()).height() + frame_pen_px(self.style) + NOTE_PAD_PX
        side = min((avail_h - L * g) / (reach * L + TAIL), avail_w / ((H - 1) * PITCH_X + 1.12))
        return PITCH_Y if side <= 0 else min(PITCH_Y, reach + g / side)

    def fit_pitch(self) -> bool:
        """Take the wanted pitch (tiles, notes and the page's range follow); True when it changed."""
        pitch = self.wanted_pitch_y()
        if abs(pitch - self._pitch_y) < 0.005:
            return False
        self._pitch_y = pitch
        self.grid.prepareGeometryChange()
        self.grid.pitch = (PITCH_X, pitch)
        self._place_notes()
        self._apply_page()
        return True

    def set_controls_visible(self, on: bool) -> None:
        """Figure first: the controls row hides (the base view), and the page buttons stay hidden when a new page
        shape shows them (presented, a 30 × 9 grid's ▲▼ came back above the slide at the first layout)."""
        super().set_controls_visible(on)
        self._controls_on = on
        self._apply_page()

    def range_height(self, rows: int) -> float:
        """The page's height in tile units: its rows and the number under the last."""
        return (rows - 1) * self._pitch_y + self._pitch_y + TAIL

    def split_spare(self, extra: float) -> tuple[float, float]:
        """(left, right) of the width the grid cannot use: centred presented, all at the right docked."""
        left = extra / 2 if self.presented else 0.0
        return left, extra - left
