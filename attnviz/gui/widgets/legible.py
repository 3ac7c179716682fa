"""The smallest label a figure may draw: what the back row of a lecture hall still reads.

12 px on a 1920×1080 projection. Three cases:

* **Docked** (the app's window, not presenting): 9 pt, 12 px at 96 dpi, at every window size. A
  1280×720 desk window is projected as it is, so its labels must be as large as a 1080-line one's.
* **Presenting** (large type): the figure is on the projected screen itself: 12 px on a 1080-line
  window, in proportion on a smaller one (a 1280×720 projector fills the same wall, so 8 px there is as
  large in the room as 12 px at 1080 lines).
* **Exporting** (within :func:`exporting`): 12 px on the page, whatever its size. A figure is laid out
  smaller than its page and drawn scaled up (``scale``: ×1.8 for a bare 1920×1080 slide), so the floor
  in its layout is 12 px ÷ the scale, and never under 5 pt (a larger page keeps its labels in
  proportion). A fixed 5 pt in the layout drew 8 px labels on a 1280×720 or a square 1200×1200 page
  (×1.06, ×1.2) and 10.5 px on a 16:9 deck page whose title and caption take part of the height.

Where labels do not fit at the floor, a view names every k-th label or gives the figure more room; it
never draws type under it.

The floors are type sizes (em), and a font's letters ink less than its em: DejaVu Sans at 12 px inks a 'b' or a
'0' 10 px tall, which a measurement of the screen reads as a 10-px label. :func:`ink_pt` gives the size whose
tallest letters ink a floor's pixels, for labels fitted down to the floor (issue 36: the matrix form's row labels
at 1280×720); :func:`label_floor_pt` is that floor for a figure's row and column labels, in exports and presented.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

from PySide6.QtGui import QFont, QFontMetricsF, QGuiApplication

__all__ = ["floor_pt", "exporting", "is_exporting", "export_floor_pt", "EXPORT_FLOOR_PT", "PAGE_FLOOR_PX", "DOCKED_FLOOR_PT", "HELD_FLOOR", "held_floor_pt", "PRESENTED_FLOOR_PT", "ink_pt", "label_floor_pt", "layout_scale", "ONE_PAGE", "on_one_page"]

EXPORT_FLOOR_PT = 5.0  # the smallest layout size an export draws (×1.8 on a 1920×1080 slide: 12 px)
SLIDE_SCALE = 1.8  # a bare 1920×1080 slide's layout scale: what an export laid out without its scale assumes
PAGE_FLOOR_PX = 12.0  # the smallest label on an exported page, in the page's pixels
DOCKED_FLOOR_PT = 9.0  # 12 px at 96 dpi
HELD_FLOOR = "legible_floor_pt"  # a widget property: the floor its figures keep whatever the screen's size
ONE_PAGE = "legible_one_page"  # a widget property: its figures fit its page, never scroll (the live lesson's scenes)
PRESENTED_FLOOR_PT = 9.0  # 12 px at 96 dpi on a 1080-line screen
FULL_HD_LINES = 1080.0

_exports: list[float] = []  # the layout scale of each export being laid out now (GUI thread only: exports paint widgets)


@contextmanager
def exporting(scale: float = SLIDE_SCALE):
    """Within this block figures are laid out for an export drawn ``scale`` times larger than its layout
    (``render_figure``'s scale): labels keep :data:`PAGE_FLOOR_PX` on the page."""
    _exports.append(float(scale) if scale and scale > 0 else 1.0)
    try:
        yield
    finally:
        _exports.pop()


def export_floor_pt(scale: float) -> float:
    """Points, in a layout drawn ``scale`` times larger, of a label that is 12 px on the page (at least 5 pt)."""
    return max(EXPORT_FLOOR_PT, PAGE_FLOOR_PX * 72.0 / 96.0 / scale)


def is_exporting() -> bool:
    """True while a figure is laid out for a file (within :func:`exporting`): what a slide cannot do, e.g.
    page with ▲▼◀▶, its text must not offer."""
    return bool(_exports)


def layout_scale() -> float:
    """How many times larger than its layout the figure being exported is drawn (1 on screen): what items
    drawn in page pixels, not layout pixels (pyqtgraph's pxMode scatter symbols), multiply their sizes by."""
    return _exports[-1] if _exports else 1.0


def floor_pt(style, widget=None) -> float:
    """Points of the smallest label for ``style``, drawn in ``widget`` (its window's height scales the
    presenting floor; without a widget, a 1080-line screen)."""
    if style.font_scale <= 1:
        return export_floor_pt(_exports[-1]) if _exports else DOCKED_FLOOR_PT
    lines = FULL_HD_LINES
    if widget is not None:
        win = widget.window()
        if win is not None and win.height() > 0:
            lines = win.height()
    return max(PRESENTED_FLOOR_PT * min(1.0, max(2.0 / 3.0, lines / FULL_HD_LINES)), held_floor_pt(widget))


def held_floor_pt(widget) -> float:
    """The floor a container holds its figures to on screen (its ``legible_floor_pt`` property, e.g. the live
    lesson's 12 px at every screen size, issue 36), else 0; an export keeps its own floor."""
    while widget is not None and not _exports:
        held = widget.property(HELD_FLOOR)
        if held:
            return float(held)
        widget = widget.parentWidget()
    return 0.0


def on_one_page(widget) -> bool:
    """True when ``widget`` is drawn inside a container whose figures must fit its page (:data:`ONE_PAGE`)."""
    while widget is not None:
        if widget.property(ONE_PAGE):
            return True
        widget = widget.parentWidget()
    return False


INK_SAMPLE = "bdhkABD0"  # letters up to the ascender line, none below the baseline: a label's tallest ink


def ink_pt(font: QFont, pt: float) -> float:
    """Points at which ``font``'s tallest letters (b, d, A, 0) ink as many screen pixels as a ``pt`` type size
    names (9 pt: 12 px at 96 dpi); at least ``pt``."""
    return _ink_pt(font.family(), round(float(pt), 3))


@lru_cache(maxsize=64)
def _ink_pt(family: str, pt: float) -> float:
    screen = QGuiApplication.primaryScreen()
    px = pt * (screen.logicalDotsPerInch() if screen is not None else 96.0) / 72.0
    font = QFont(family)
    size = pt
    for _ in range(40):  # quarter points: the hinting makes the ink step at whole pixels
        font.setPointSizeF(size)
        if QFontMetricsF(font).tightBoundingRect(INK_SAMPLE).height() >= px - 0.01:
            break
        size += 0.25
    return size


def label_floor_pt(font: QFont, style, widget=None) -> float:
    """Points of the smallest row or column label ``font``'s family may draw (issue 36, Deliver 4): the floor
    of :func:`floor_pt` as letters' ink, not type. On screen (hinted) :func:`ink_pt`; presented at least the docked
    floor (presenting's floor in proportion is 8 px at 720 lines: presented labels never smaller than docked ones);
    in an export the type that inks the floor's page pixels once drawn ``scale`` times larger (there the glyphs
    are scaled outlines, so the font's own proportion of ink to em: DejaVu's 12-px type inked 10-11 px on a slide)."""
    pt = floor_pt(style, widget)
    if _exports:
        return pt * _ink_share_of_em(font.family())
    if style.font_scale > 1:
        pt = max(pt, DOCKED_FLOOR_PT)
    return ink_pt(font, pt)


@lru_cache(maxsize=16)
def _ink_share_of_em(family: str) -> float:
    """Em over the height of the tallest letters (b, d, A, 0) of ``family`` drawn large (no hinting to speak of),
    with a quarter pixel in 12 to spare for the antialiased edge a measurement of the page does not count (half a
    pixel left 21 tokens on a 1200×1200 page 0.1 px a label short of naming each one)."""
    font = QFont(family)
    font.setPixelSize(480)
    ink = QFontMetricsF(font).tightBoundingRect(INK_SAMPLE).height() / 480.0
    return (12.25 / 12.0) / max(ink, 0.3)
