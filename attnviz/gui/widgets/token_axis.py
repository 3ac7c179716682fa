"""Token labels along a heatmap axis: elided, rotated when crowded, every k-th when there are many."""

from __future__ import annotations

import math

import numpy as np
from typing import Callable

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtWidgets import QGraphicsItem
from PySide6.QtGui import QColor, QFontMetricsF, QPen

from attnviz.gui.style import ViewStyle
from attnviz.gui.widgets.token_axis_layout import AxisLayout
from attnviz.gui.widgets.token_label_images import LabelImages
from attnviz.text.token_display import display_token  # the one token label text (app, HTML page, CLI)

__all__ = ["TokenAxisItem", "display_token"]

class TokenAxisItem(AxisLayout, LabelImages, pg.GraphicsWidget):
    """Labels at given data positions of a linked ViewBox ("left", "top" or "bottom").

    Labels are elided to ``max_chars`` wide. When they do not fit, the axis tries in turn: side by
    side (bottom/top), at 45°, upright at 90°, then a smaller font (down to the legible floor of
    :mod:`attnviz.gui.widgets.legible`, or ``MIN_FACTOR`` of the style's size); only when even that
    overlaps is every k-th label drawn (k
    chosen from the pixels per label, always starting at label 0; hovers still name every cell).
    So every label of up to 64 tokens is drawn in a 1920×1080 window. ``on_click(index)`` is called
    on a click.
    """

    ANGLE = 45.0  # the first rotation tried; ``angle`` is the one in use

    MIN_FACTOR = 0.25
    LINE = 0.92  # labels are packed at this fraction of the font's line height (its leading is spare)
    # slanted (45°) labels lie side by side along their whole length, so one's quotes meet the next one's
    # descenders unless a whole line lies between them (at 92 % the head map's neighbours touched at 12 px, the
    # lesson's scene 11 at 1280×720 had "5 “,”" on "6 all"): a whole line even at the edge of the layout's dead
    # band (HYSTERESIS below), else they stand upright; a slide asks for a line and a bit (``SLANT_LINE_SLIDE``)
    SLANT_LINE = 1.0 / (1 - 0.03)
    SLANT_LINE_SLIDE = 1.08

    def __init__(self, orientation: str, style: ViewStyle | None = None, max_chars: int = 14):
        super().__init__()
        if orientation not in ("left", "top", "bottom"):
            raise ValueError(orientation)
        self.orientation = orientation
        self.style = style or ViewStyle()
        self.max_chars = max_chars
        self.labels: list[str] = []
        self.centers: list[float] = []
        self.selected: int | None = None
        self.dimmed: int | None = None  # a label drawn greyed, whole (a row that wrote nothing)
        self.title = ""
        self.view: pg.ViewBox | None = None
        self.on_click: Callable[[int], None] | None = None
        self.stride = 1
        self.rotated = False
        self.angle = 0.0  # 0, 45 or 90 degrees (bottom/top axes)
        self.font_factor = 1.0  # the labels' font relative to the style's (shrunk when crowded)
        self.major: list[int] | None = None  # labels that alone are drawn, full size, when all would shrink
        self.major_only = False  # the current layout draws only the major labels
        self.max_extent = 0.0  # rotated labels reach at most this far from the axis (0: no limit)
        self._overhang = 0.0  # how far rotated labels reach left of the axis (see boundingRect)
        self._elided: tuple[list[str], float] | None = None
        self._label_images: dict = {}  # (text, bold, grey, (size, ...)) -> (atlas, its part, dx, dy)
        self._font_cache = None  # ((font factor, style), QFont)
        self._strip = None  # (layout key, b when drawn, anchors from, to, image, x, y): the labels drawn last
        self._last_layout = None  # (inputs, pixels per label, choice) of the last layout (see HYSTERESIS)
        # drawn once into a pixmap and reused until its labels/range change: a head switch then
        # repaints only the image (render_figure turns caching off so exports keep vector text)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._update_size()

    # -- configuration -------------------------------------------------------------------------
    def link_view(self, view: pg.ViewBox) -> None:
        self.view = view
        view.sigRangeChanged.connect(self._view_changed)
        view.sigResized.connect(self._view_changed)

    def set_labels(self, labels, centers=None) -> None:
        self.labels = [display_token(t) for t in labels]
        self.centers = [i + 0.5 for i in range(len(self.labels))] if centers is None else list(centers)
        self._elided = None
        self._strip = None  # other labels
        self._update_size()
        self.update()

    def set_major(self, indices) -> None:
        """Labels to draw alone, at full size, when all of them would need a smaller font (e.g. the
        first patch of every grid row of an image: the grid reads better than 65 tiny labels)."""
        self.major = None if indices is None else sorted(int(i) for i in indices)
        self._strip = None
        self._update_size()
        self.update()

    def set_selected(self, index: int | None) -> None:
        if index != self.selected:
            self.selected = index
            self.update()

    def set_dimmed(self, index: int | None) -> None:
        """Grey one label and never shorten it (it explains why its row is washed out)."""
        if index != self.dimmed:
            self.dimmed = index
            self._elided = None
            self._strip = None
            self._update_size()
            self.update()

    def set_style(self, style: ViewStyle) -> None:
        self.style = style
        self._elided = None
        self._label_images.clear()  # drawn in the old font and colour
        self._strip = None
        self._update_size()
        self.update()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.update()  # the device-coordinate cache was drawn at the old size

    def _view_changed(self, *args) -> None:
        self._update_size()
        self.update()

    # -- geometry ------------------------------------------------------------------------------
    def _metrics(self) -> QFontMetricsF:
        """Metrics of the labels' font at the current ``font_factor``."""
        return self.style.metrics(self.font_factor)

    def _first_view(self):
        """The first view of the axis' scene, or None when there is none alive: a view box's range can change
        while the figure is being deleted, and the scene (or its view) read then was already gone
        (RuntimeError: "Internal C++ object already deleted"). The floor then is a 1080-line screen's."""
        scene = self.scene()
        if scene is None or not shiboken6.isValid(scene):
            return None
        views = scene.views()
        return views[0] if views and shiboken6.isValid(views[0]) else None

    def _texts(self) -> tuple[list[str], float]:
        """Elided labels and the widest one's width at the style's full size, cached until labels or
        style change (widths at a smaller font are this times ``font_factor``)."""
        if self._elided is None:
            fm = self.style.metrics()
            limit = fm.horizontalAdvance("M") * self.max_chars * 0.75
            texts = [fm.elidedText(t, Qt.ElideRight, limit) if len(t) > 3 and i != self.dimmed else t
                     for i, t in enumerate(self.labels)]
            # measuring 4096 labels is slow: the widest few by character count are enough
            longest = sorted(range(len(texts)), key=lambda i: -len(texts[i]))[:32]
            width = max((fm.horizontalAdvance(texts[i]) for i in longest), default=fm.horizontalAdvance("0"))
            self._elided = (texts, width)
        return self._elided

    def _text(self, i: int) -> str:
        return self._texts()[0][i]

    def _max_text_w(self) -> float:
        return self._texts()[1] * self.font_factor

    def _px_per_unit(self) -> float:
        if self.view is None or self.view.width() <= 0:
            return 0.0
        (x0, x1), (y0, y1) = self.view.viewRange()
        if self.orientation == "left":
            return self.view.height() / max(y1 - y0, 1e-9)
        return self.view.width() / max(x1 - x0, 1e-9)

    # a new layout only when the pixels per label move by more than this share: the layout changes the
    # axis' size, which changes the view's size and so the pixels per label; without a dead band a
    # narrow map flipped between two font sizes for ever (measured: 128 repaints a second, idle)
    HYSTERESIS = 0.03  # (SLANT_LINE above allows for it)

    def boundingRect(self) -> QRectF:
        # rotated labels end at their cell and run left, past the axis' own rectangle (the first
        # ones over the empty corner under the row labels): the cached pixmap must include them
        return super().boundingRect().adjusted(-self._overhang, 0, 0, 0)

    def _update_size(self) -> None:
        self._layout()
        fm = self._metrics()
        text_w = self._max_text_w()
        overhang = 0.0
        if self.rotated and self.orientation != "left":
            a = math.radians(self.angle)
            overhang = (text_w + 2) * math.cos(a) + fm.height() * (1.0 if self.angle < 90 else 0.5)
        if overhang != self._overhang:
            # only on a real change: called on every range change, and an unneeded geometry change
            # costs the whole figure a second paint
            self.prepareGeometryChange()
            self._overhang = overhang
        if self.orientation == "left":
            self.setFixedWidth(math.ceil(text_w + 10))
            return
        if self.rotated:
            a = math.radians(self.angle)
            h = text_w * math.sin(a) + fm.height() * max(math.cos(a), 0.3) + 8
        else:
            h = fm.height() + 8
        self.setFixedHeight(math.ceil(h))

    def _local(self, c: float) -> float:
        a, b = self._affine()
        return a * c + b

    def _affine(self) -> tuple[float, float]:
        """Local coordinate = a · data + b along the axis (the view maps data linearly)."""
        if self.orientation == "left":
            p0 = self.mapFromScene(self.view.mapViewToScene(QPointF(0, 0))).y()
            p1 = self.mapFromScene(self.view.mapViewToScene(QPointF(0, 1))).y()
        else:
            p0 = self.mapFromScene(self.view.mapViewToScene(QPointF(0, 0))).x()
            p1 = self.mapFromScene(self.view.mapViewToScene(QPointF(1, 0))).x()
        return p1 - p0, p0

    # -- drawing -------------------------------------------------------------------------------
    def visible_indices(self) -> list[int]:
        """The label indices drawn at the current size (every ``stride``-th plus the selected one)."""
        self._layout()
        if self.major_only:
            idx = [i for i in self._major_shown if 0 <= i < len(self.labels)]
            sel = self.selected
            if sel is not None and 0 <= sel < len(self.labels) and sel not in idx:
                # the selected one joins them; the major label it would overlap gives way
                pitch = abs(self.centers[1] - self.centers[0]) * self._px_per_unit() if len(self.centers) > 1 else 1
                room = self._metrics().height() * self.LINE / max(pitch, 1e-9)
                idx = [i for i in idx if abs(i - sel) >= room] + [sel]
            return idx
        idx = list(range(0, len(self.labels), self.stride))
        sel = self.selected
        if sel is not None and 0 <= sel < len(self.labels) and sel not in idx:
            # the selected label replaces its neighbours so the bold text does not overlap them
            idx = [i for i in idx if abs(i - sel) >= self.stride] + [sel]
        return idx

    def _centers_array(self) -> np.ndarray:
        """``centers`` as a float array, made again only when the list is replaced."""
        cached = getattr(self, "_centers_np", None)
        if cached is None or cached[0] is not self.centers:
            cached = self._centers_np = (self.centers, np.asarray(self.centers, dtype=np.float64))
        return cached[1]

    def _indices_in_view(self, a: float, b: float, lo: float, hi: float) -> np.ndarray:
        """The drawn label indices (as :meth:`visible_indices`) whose position a·centre + b is in [lo, hi].

        Zoomed into a 16,384-token map only ~100 of them are; building every stride-th index of the whole
        axis and its position on each pan frame cost ~2 ms, so only the range of centres in view is
        looked at (centres ascending, as every axis sets them; otherwise the whole list)."""
        centers = self._centers_array()
        if self.major_only or len(centers) < 2 or a == 0 or not bool(np.all(np.diff(centers[:2]) > 0)):
            idx = np.asarray(self.visible_indices(), dtype=np.intp)
        else:
            self._layout()
            d0, d1 = sorted(((lo - b) / a, (hi - b) / a))
            s = self.stride
            i0 = max(0, int(np.searchsorted(centers, d0, "left")) - s)  # a stride of margin: the selected
            i1 = min(len(centers), int(np.searchsorted(centers, d1, "right")) + s)  # label's neighbours
            idx = np.arange(-(-i0 // s) * s, i1, s, dtype=np.intp)
            sel = self.selected
            if sel is not None and 0 <= sel < len(self.labels) and sel % s:
                idx = np.append(idx[np.abs(idx - sel) >= s], sel)  # as visible_indices: it replaces neighbours
        positions = a * centers[idx] + b if len(idx) else np.zeros(0)
        inside = (positions >= lo) & (positions <= hi)
        return idx[inside], positions[inside]

    def paint(self, p, *args):
        if self.view is None or not self.labels:
            return
        r = self.boundingRect()
        fm = self._metrics()
        lo = -fm.height()
        hi = (r.height() if self.orientation == "left" else r.width()) + fm.height()
        a, b = self._affine()
        # only the labels inside the axis: zoomed into a long map, most of them are outside
        idx, positions = self._indices_in_view(a, b, lo, hi)
        if self.orientation == "left":
            if self.stride > 1 or self.major_only:  # with every label drawn, a tick reads as a hyphen ("it-")
                p.setPen(QPen(QColor(self.style.foreground)))
                p.drawLines([QLineF(r.width() - 4, y, r.width(), y) for y in positions.tolist()])
        elif not self.rotated:  # rotated labels point at their cell themselves: a tick would read as a quote
            edge, sign = (0.0, 1) if self.orientation == "bottom" else (r.height(), -1)
            p.setPen(QPen(QColor(self.style.foreground)))
            p.drawLines([QLineF(x, edge, x, edge + sign * 4) for x in positions.tolist()])
        scale = self._raster_scale(p)
        if scale is None:  # a vector file (SVG, PDF): real text
            self._paint_text(p, r, fm, *self._text_positions(idx, positions, r, fm))
            return
        # on screen and in raster files the labels are drawn once into a strip image that is copied, moved
        # by the pan: a long map's axes repaint on every pan frame, and ~90 labels a frame drawn with
        # drawText cost ~5 ms an axis (~15 ms on a busy machine), copied one by one still ~3 ms. A strip
        # built while panning covers a view's length more on each side; a new zoom or selection rebuilds it
        key = (self.font_factor, self.angle, self.stride, self.major_only, self.selected, self.dimmed, r.x(), r.y(),
               r.width(), r.height(), scale, round(a, 9), id(self.labels), id(self.style))
        strip = self._strip
        shift = b - strip[1] if strip is not None else 0.0
        if strip is None or strip[0] != key or not (strip[2] + shift <= lo and hi <= strip[3] + shift):
            # a pan that left the strip while overlapping it: room to pan on (a view's length each side); a
            # jump past it or a new zoom: only the view (the margins tripled the labels drawn a jump frame)
            panned = strip is not None and strip[0] == key and lo < strip[3] + shift and hi > strip[2] + shift
            margin = (hi - lo) if panned else 0.0
            strip = self._strip = (key, b, lo - margin, hi + margin,
                                   *self._strip_image(a, b, lo - margin, hi + margin, r, fm, scale))
            shift = 0.0
        image, x, y = strip[4:]
        x, y = (x, y + shift) if self.orientation == "left" else (x + shift, y)
        p.drawImage(QPointF(round(x * scale) / scale, round(y * scale) / scale), image)  # whole device pixels

    def mouseClickEvent(self, ev):
        if self.on_click is None or self.view is None or not self.labels or ev.button() != Qt.LeftButton:
            return
        pos = ev.pos().y() if self.orientation == "left" else ev.pos().x()
        dist = [abs(self._local(c) - pos) for c in self.centers]
        i = min(range(len(dist)), key=dist.__getitem__)
        ev.accept()
        self.on_click(i)
