"""Labels for the points of a scatter plot, placed so that no two overlap (Qt-free, pixels in, pixels out).

Greedy placement, as map makers do it: each label tries the places right beside its point first (right,
left, above, below, the corners), then places further out along twelve directions, joined to its point
by a leader line. A place is taken only when the label's box overlaps no label already placed, no point's
dot and no reserved area (the ring around the selected point), and stays inside the plot. A label with no
free place is left out: the view names that point on hover. The label to keep (the selected point's) is
placed first, beside its ring even where that covers other dots, so it is always named where it is.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Placement", "place_labels", "boxes_overlap"]

_ADJACENT = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (1, 1), (-1, -1), (-1, 1))  # right, left, up, down, corners
_DIRECTIONS = [(np.cos(a), -np.sin(a)) for a in np.radians(np.arange(0, 360, 30))]  # y grows downwards
PAD = 2.0  # px kept free between two labels


class Placement:
    """Where one label goes: its box's top-left (``left``, ``top``) in pixels, and whether a leader
    line joins it to its point (placed away from it)."""

    __slots__ = ("left", "top", "width", "height", "leader")

    def __init__(self, left: float, top: float, width: float, height: float, leader: bool):
        self.left, self.top, self.width, self.height, self.leader = left, top, width, height, leader

    @property
    def box(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom)."""
        return self.left, self.top, self.left + self.width, self.top + self.height

    def nearest_point(self, x: float, y: float) -> tuple[float, float]:
        """The point of the box nearest to (x, y): where a leader line from (x, y) meets it."""
        left, top, right, bottom = self.box
        return min(max(x, left), right), min(max(y, top), bottom)


def boxes_overlap(a, b, pad: float = 0.0) -> bool:
    """Whether boxes ``a`` and ``b`` (left, top, right, bottom) overlap (closer than ``pad``)."""
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _candidates(x: float, y: float, w: float, h: float, gap: float, rings: int, step: float) -> np.ndarray:
    """(n, 5) candidate boxes (left, top, right, bottom, leader) for a w × h label of point (x, y)."""
    out = []
    for dx, dy in _ADJACENT:
        cx = x + dx * (gap + w / 2) if dx else x
        cy = y + dy * (gap + h / 2) if dy else y
        if dx and dy:  # a corner: the box's corner touches the circle of radius gap
            cx, cy = x + dx * (gap * 0.7 + w / 2), y + dy * (gap * 0.7 + h / 2)
        out.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, 0.0))
    for k in range(1, rings + 1):
        d = gap + k * step
        for ux, uy in _DIRECTIONS:
            cx, cy = x + ux * (d + abs(ux) * w / 2), y + uy * (d + abs(uy) * h / 2)
            out.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, 1.0))
    return np.asarray(out, dtype=np.float64)


def place_labels(points, sizes, radius: float, bounds=None, first: int | None = None,
                 reserved=(), rings: int = 5) -> list[Placement | None]:
    """Place one label per point without overlaps.

    Parameters
    ----------
    points : (N, 2) pixel positions of the points (y grows downwards).
    sizes : (N, 2) label widths and heights in pixels.
    radius : the dots' radius in pixels; labels keep clear of every dot (but ``first``).
    bounds : (left, top, right, bottom) the labels must stay inside (None: anywhere).
    first : the label placed first (the selected point's), so it gets the nearest free place.
    reserved : boxes (left, top, right, bottom) no label may cover (the ring around the selected point);
        the ``first`` label starts outside them.
    rings : how many steps outwards (each a label's height) a label may move, with a leader line.

    Returns
    -------
    list of :class:`Placement`, or None for a label with no free place (left out; hover names it).
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    sz = np.asarray(sizes, dtype=np.float64).reshape(-1, 2)
    n = len(pts)
    reserved = [tuple(map(float, r)) for r in reserved]
    # every dot is an obstacle: a label over a point would hide it
    dots = np.column_stack([pts - radius, pts + radius]) if n else np.zeros((0, 4))
    taken = np.zeros((0, 4))
    order = list(range(n))
    if first is not None and 0 <= first < n:
        order.remove(first)
        order.insert(0, first)
    result: list[Placement | None] = [None] * n
    for i in order:
        x, y = pts[i]
        w, h = sz[i]
        gap = radius + 3.0
        if i == first and reserved:  # start beyond the ring around the selected point
            gap = max([gap] + [max(r[2] - r[0], r[3] - r[1]) / 2 + 3.0 for r in reserved])
        cand = _candidates(x, y, w, h, gap, rings, max(h, 8.0) * 1.1)
        ok = np.ones(len(cand), dtype=bool)
        if bounds is not None:
            bl, bt, br, bb = bounds
            ok &= (cand[:, 0] >= bl) & (cand[:, 1] >= bt) & (cand[:, 2] <= br) & (cand[:, 3] <= bb)
        # the selected label stays beside its ring even over other dots (hover still names them)
        obstacles = [taken, dots if i != first else dots[:0], np.asarray(reserved, dtype=np.float64).reshape(-1, 4)]
        for obs, pad in zip(obstacles, (PAD, 0.0, 1.0)):
            if len(obs) and ok.any():
                hit = ((cand[:, None, 0] < obs[None, :, 2] + pad) & (obs[None, :, 0] < cand[:, None, 2] + pad)
                       & (cand[:, None, 1] < obs[None, :, 3] + pad) & (obs[None, :, 1] < cand[:, None, 3] + pad))
                ok &= ~hit.any(axis=1)
        free = np.flatnonzero(ok)
        if not len(free):
            continue
        c = cand[free[0]]
        result[i] = Placement(c[0], c[1], w, h, bool(c[4]))
        taken = np.vstack([taken, c[None, :4]])
    return result
