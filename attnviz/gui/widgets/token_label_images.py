"""How a token axis draws its labels: each label once into an atlas image, the labels in view copied into one
strip image that a pan moves (raster), or as real text (vector files). A mixin of
:class:`attnviz.gui.widgets.token_axis.TokenAxisItem`, which holds the labels and chooses their layout."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEngine, QPen, QTransform

__all__ = ["LabelImages"]


class LabelImages:
    """Label drawing for a token axis (uses its orientation, style, labels, layout and caches)."""

    def _strip_image(self, a: float, b: float, lo: float, hi: float, r: QRectF, fm, scale: float):
        """(image, x, y): the labels whose anchors lie in [lo, hi] along the axis, drawn into one image whose
        top-left goes at local (x, y); each label is drawn once (:meth:`_draw_labels`) and then copied."""
        idx, positions = self._text_positions(*self._indices_in_view(a, b, lo, hi), r, fm)
        texts, cache = self._texts()[0], self._label_images
        base = (self.font_factor, self.angle, r.width(), r.height(), scale)
        keys = [(texts[i], i == self.selected, i == self.dimmed, base) for i in idx.tolist()]
        missing = list(dict.fromkeys(k for k in keys if k not in cache))
        if len(cache) + len(missing) > self.LABEL_IMAGES:  # a new zoom or size: the old ones are not drawn soon
            cache.clear()
            missing = list(dict.fromkeys(keys))
        if missing:
            self._draw_labels(missing, r, fm, scale)
        placed = []
        for key, pos in zip(keys, positions.tolist()):
            atlas, source, dx, dy = cache[key]
            x, y = (dx, pos + dy) if self.orientation == "left" else (pos + dx, dy)
            placed.append((atlas, source, x, y))
        if not placed:
            image = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(0)
            return image, 0.0, 0.0
        # the corner on whole device pixels: each label then lands where it would have been copied alone
        x0 = math.floor(min(x for _, _, x, _ in placed) * scale) / scale
        y0 = math.floor(min(y for _, _, _, y in placed) * scale) / scale
        x1 = max(x + s.width() / scale for _, s, x, _ in placed)
        y1 = max(y + s.height() / scale for _, s, _, y in placed)
        image = QImage(max(1, math.ceil((x1 - x0) * scale) + 1), max(1, math.ceil((y1 - y0) * scale) + 1),
                       QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(scale)
        image.fill(0)
        q = QPainter(image)
        for atlas, source, x, y in placed:
            q.drawImage(QPointF(round((x - x0) * scale) / scale, round((y - y0) * scale) / scale), atlas, source)
        q.end()
        return image, x0, y0

    def _text_positions(self, idx, positions, r: QRectF, fm):
        """(indices, text centres) of a row axis with the labels of rows inside it kept inside it: the first row of
        a 128-row map (3.7 px rows) centred its label 2 px under the axis' top, half of it above, cut and under
        the figure's title (the lesson's "Positions as waves"). The tick stays at the row; a label the moved one
        would now touch gives way."""
        if self.orientation != "left" and self.rotated and len(positions):
            # a turned column label reaches sin(angle) half a line right of its cell (the left is the overhang's,
            # see boundingRect): past the axis' end it was cut by the item's cache, as the last column of a
            # 131,072-token map ("130,934" cut in half). Dropped, not moved: it has no tick to say where it points
            # (its glyphs: the packing's LINE of it, so every column of a map labelled token by token keeps its label)
            reach = fm.height() * self.LINE / 2 * math.sin(math.radians(self.angle))
            end = r.right()  # (the rectangle starts left of the axis by the overhang)
            inside = (positions >= 0) & (positions <= end)
            keep = ~inside | (positions + reach <= end + 0.5)
            return idx[keep], positions[keep]
        if self.orientation != "left" or not len(positions):
            return idx, positions
        half, height = fm.height() / 2, r.height()
        if height < 2 * half:
            return idx, positions
        inside = (positions >= 0) & (positions <= height)
        moved = np.where(inside, np.clip(positions, half, height - half), positions)
        drop = np.zeros(len(idx), bool)
        for edge in np.nonzero(moved != positions)[0]:
            # a neighbour gives way only when the move brings it closer than the layout itself packs labels
            # (within its dead band, less a pixel of the glyphs' leading): a first row 0.5 px over the edge
            # dropped "1 b" from S + M alone (issue 36)
            apart = np.abs(positions - positions[edge])
            packed = np.minimum(fm.height() * self.LINE, apart) * (1 - self.HYSTERESIS) - 1.0
            near = np.abs(moved - moved[edge]) < packed
            near[edge] = False
            drop |= near
        return idx[~drop], moved[~drop]

    @staticmethod
    def _raster_scale(p) -> float | None:
        """Device pixels per local unit when painting pixels with no rotation or shear, else None."""
        engine = p.paintEngine()
        if engine is None or engine.type() != QPaintEngine.Type.Raster:
            return None
        t = p.worldTransform()
        if t.m12() or t.m21() or t.m11() <= 0 or abs(t.m11() - t.m22()) > 1e-9:
            return None
        device = p.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        return float(t.m11()) * float(ratio)

    def _draw_labels(self, keys: list, r: QRectF, fm, scale: float) -> None:
        """Draw the labels of ``keys`` (text, bold, grey, (font factor, angle, axis w, h, scale)) one under
        the other into one transparent image (one painter for all: a painter per label cost ~1 ms) and
        remember each one's part of it and where its top-left goes from the label's anchor (left axis:
        (0, centre); others: (centre, 0)), as the text was drawn before: right-aligned 6 px from the left
        axis' edge, centred under or over a tick, or rotated about the tick and ending at it."""
        h = fm.height()
        if self.orientation == "left":
            turn, anchor = QTransform(), (r.width() - 6, 0.0)
        elif not self.rotated:
            turn, anchor = QTransform(), (0.0, 5.0 if self.orientation == "bottom" else r.height() - 5 - h)
        else:
            sign = 1 if self.orientation == "bottom" else -1
            turn = QTransform().rotate(-self.angle * sign)
            anchor = (0.0, (0.0 if sign > 0 else r.height()) + sign * 3)
        centred = self.orientation != "left" and not self.rotated
        align = int(Qt.AlignCenter) if centred else int(Qt.AlignRight | Qt.AlignVCenter)
        boxes, outers = [], []
        bold_fm = self.style.metrics(self.font_factor, bold=True)
        for text, bold, *_ in keys:
            w = (bold_fm if bold else fm).horizontalAdvance(text) + 2  # the bold label is wider
            box = QRectF(-w / 2, 0, w, h) if centred else QRectF(-w, -h / 2, w, h)
            boxes.append(box)
            outers.append(turn.mapRect(box).adjusted(-1, -1, 1, 1))
        width = max(o.width() for o in outers)
        heights = [math.ceil(o.height() * scale) for o in outers]  # device pixels: each label on whole rows
        tops = np.concatenate([[0], np.cumsum(heights)]).tolist()
        atlas = QImage(max(1, math.ceil(width * scale)), max(1, tops[-1]), QImage.Format.Format_ARGB32_Premultiplied)
        atlas.setDevicePixelRatio(scale)
        atlas.fill(0)
        q = QPainter(atlas)
        q.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        colour = QColor(self.style.foreground)
        grey = QColor(colour)
        grey.setAlphaF(0.55)
        fonts = {False: self._font(), True: self.style.font(self.font_factor, bold=True)}
        pens = {False: QPen(colour), True: QPen(grey)}
        cache = self._label_images
        state = (None, None)  # (bold, dimmed) set on the painter: set again only when it changes
        for key, box, outer, top, rows in zip(keys, boxes, outers, tops, heights):
            text, bold, dimmed, _ = key
            if (bold, dimmed) != state:
                q.setFont(fonts[bold])
                q.setPen(pens[dimmed])
                state = (bold, dimmed)
            # the label's outer box at (0, top) of the atlas (top in device pixels), then turned: one transform
            q.setTransform(turn * QTransform.fromTranslate(-outer.x(), top / scale - outer.y()))
            q.drawText(box, align, text)
            source = QRectF(0, top, math.ceil(outer.width() * scale), rows)  # in the atlas' own pixels
            cache[key] = (atlas, source, anchor[0] + outer.x(), anchor[1] + outer.y())
        q.end()

    LABEL_IMAGES = 4096  # labels kept drawn (a few MB): those of a pan back and forth

    def _font(self):
        """The labels' regular font at the current size (made once per size: a QFont a label cost ~7 ms)."""
        key = (self.font_factor, self.style)
        if self._font_cache is None or self._font_cache[0] != key:
            self._font_cache = (key, self.style.font(self.font_factor))
        return self._font_cache[1]

    def _paint_text(self, p, r, fm, idx, positions) -> None:
        """The labels as text (vector files keep them selectable and sharp at any size)."""
        st = self.style
        pen = QPen(QColor(st.foreground))
        grey = QColor(st.foreground)
        grey.setAlphaF(0.55)
        right_v = int(Qt.AlignRight | Qt.AlignVCenter)
        centre = int(Qt.AlignCenter)
        texts = self._texts()[0]
        fonts = {False: self._font(), True: None}
        current = None
        for i, pos in zip(idx.tolist(), positions.tolist()):
            bold = i == self.selected
            if bold != current:
                if fonts[bold] is None:
                    fonts[bold] = st.font(self.font_factor, bold=True)
                p.setFont(fonts[bold])
                current = bold
            text = texts[i]
            p.setPen(QPen(grey) if i == self.dimmed else pen)
            if self.orientation == "left":
                p.drawText(QRectF(0, pos - fm.height() / 2, r.width() - 6, fm.height()), right_v, text)
                continue
            edge = 0.0 if self.orientation == "bottom" else r.height()
            sign = 1 if self.orientation == "bottom" else -1
            if not self.rotated:
                y = 5 if sign > 0 else r.height() - 5 - fm.height()
                p.drawText(QRectF(pos - 200, y, 400, fm.height()), centre, text)
                continue
            p.save()
            p.translate(pos, edge + sign * 3)
            p.rotate(-self.angle * sign)
            w = fm.horizontalAdvance(text) + 2
            # text ends at the tick (right-aligned), so long labels run away from the plot
            p.drawText(QRectF(-w, -fm.height() / 2, w, fm.height()), right_v, text)
            p.restore()
