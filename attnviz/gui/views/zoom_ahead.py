"""Where a zoom in is heading: the point it keeps fixed and the part of the map the next finer level first shows.

No Qt, no numpy arrays: plain geometry on (row0, row1, col0, col1) ranges of map rows and columns. A mouse-wheel
zoom scales the view about the pointer, which stays put; from two successive views that point is recovered per
axis as the fixed point of the map b = x* + (a − x*)·s (s = new span / old span). The long head map uses it to
compute, while a view is still drawn from a coarser level, the finer level's tiles the zoom will show first: the
current view scaled about that point to the span at which the finer level begins (one map row per pixel at level
0, two at level 1, …), rather than every tile under the view (most of which a zoom in never shows).
"""

from __future__ import annotations

__all__ = ["zoom_anchor", "next_level_window"]

# a view whose span shrank by less than this fraction is not a zoom in (a pan, a resize, rounding)
MIN_SHRINK = 1e-3

Range = tuple[float, float, float, float]  # (row0, row1, col0, col1) in map rows and columns


def _axis_anchor(a0: float, a1: float, b0: float, b1: float) -> float:
    """The point of one axis a zoom from [a0, a1) to [b0, b1) kept fixed, inside [b0, b1]; its middle when the
    view did not shrink (a pan or the first view) or shrank about a point outside it (zoom and pan at once)."""
    old, new = a1 - a0, b1 - b0
    if old <= 0 or new <= 0 or new > old * (1 - MIN_SHRINK):
        return (b0 + b1) / 2
    s = new / old
    x = (b0 - s * a0) / (1 - s)  # b0 = x + (a0 − x)·s
    slack = 1e-6 * new  # a pointer on the view's edge, give or take rounding
    return min(max(x, b0), b1) if b0 - slack <= x <= b1 + slack else (b0 + b1) / 2


def zoom_anchor(previous: Range | None, view: Range) -> tuple[float, float]:
    """(row, col) the zoom from ``previous`` to ``view`` kept fixed: the pointer of a wheel zoom. The middle of
    ``view`` along an axis that did not zoom in (and when there is no previous view)."""
    r0, r1, c0, c1 = view
    if previous is None:
        return (r0 + r1) / 2, (c0 + c1) / 2
    p0, p1, q0, q1 = previous
    return _axis_anchor(p0, p1, r0, r1), _axis_anchor(q0, q1, c0, c1)


def next_level_window(view: Range, anchor: tuple[float, float], per_px: float, next_per_px: float) -> Range:
    """The part of ``view`` shown when a zoom about ``anchor`` reaches ``next_per_px`` map rows a pixel (from
    ``per_px`` now): ``view`` scaled by next_per_px / per_px about the anchor; ``view`` itself when that is no
    zoom in."""
    if per_px <= next_per_px:
        return view
    s = next_per_px / per_px
    (r0, r1, c0, c1), (ar, ac) = view, anchor
    return ar + (r0 - ar) * s, ar + (r1 - ar) * s, ac + (c0 - ac) * s, ac + (c1 - ac) * s
