"""How a token axis fits its labels: rotation, font size and stride from the pixels a label has (the
:class:`~attnviz.gui.widgets.token_axis.TokenAxisItem`'s layout, kept apart from its drawing)."""

from __future__ import annotations

import math

from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, floor_pt, is_exporting, label_floor_pt

__all__ = ["AxisLayout"]


class AxisLayout:
    """Mixed into TokenAxisItem, which gives the metrics, texts, pitch and the class constants read here."""

    def _min_factor(self) -> float:
        """The smallest font factor (widgets/legible.py): docked the type floor; exported and presented the floor
        in ink, above 1 where the style's font inks less (a 1280×720 slide's 9-pt × 1.2 labels inked 11 px)."""
        view = self._first_view()
        if is_exporting() or self.style.font_scale > 1:
            return max(self.MIN_FACTOR, label_floor_pt(self.style.font(), self.style, view) / self.style.font_pt())
        return min(1.0, max(self.MIN_FACTOR, floor_pt(self.style, view) / self.style.font_pt()))

    def _layout(self) -> None:
        """Choose rotation, font size and stride from the pixels available per label."""
        n = len(self.centers)
        pitch = (self.centers[1] - self.centers[0]) if n > 1 else 1.0
        px = abs(pitch) * self._px_per_unit()
        key = (n, pitch, self.orientation, self.max_extent, self.style.font_pt(), self.style.metrics().height(),
               self._texts()[1], tuple(self.major or ()), self._min_factor())  # (an export's floor is lower)
        last = self._last_layout
        if last is not None and last[0] == key and px > 0 and abs(px - last[1]) <= self.HYSTERESIS * last[1]:
            self.font_factor, self.angle, self.rotated, self.stride, self.major_only, self._major_shown = last[2]
            # kept inside the band unless its labels would now touch (64 rows presented at 1920×1080 kept a
            # font chosen for a 0.4 % taller pitch): a smaller font then, which still fits when the pitch
            # comes back, so the two never alternate
            if self.major_only or self.stride * px >= self._need() - 1e-6:
                return
        self._choose_layout(px)
        self._last_layout = (key, px, (self.font_factor, self.angle, self.rotated, self.stride, self.major_only,
                                       getattr(self, "_major_shown", [])))

    def _choose_layout(self, px: float) -> None:
        self.font_factor, self.angle = max(1.0, self._min_factor()), 0.0  # (over 1: the ink floor, see above)
        self.major_only = False
        full_h = self.style.metrics(self.font_factor).height()
        if self.orientation != "left":
            if px >= self._max_text_w() + 6:
                self.rotated, self.stride = False, 1  # side by side
                return
            self.angle = self.ANGLE if px >= full_h * self.SLANT_LINE / math.sin(math.radians(self.ANGLE)) else 90.0
        self.rotated = self.angle > 0
        self.major_only = False
        if px > 0 and px < full_h * self.LINE and self.major and len(self.major) > 1:
            # the major labels at full size, each far enough from the last one kept (CLS and the
            # first patch are neighbours: the first wins)
            room = full_h * self.LINE / px
            kept = [self.major[0]]
            for i in self.major[1:]:
                if i - kept[-1] >= room:
                    kept.append(i)
            if len(kept) * 2 >= len(self.major):  # most of them fit: draw only these
                self.major_only, self.stride, self._major_shown = True, 1, kept
                return
        if px > 0 and px < full_h * self.LINE:  # even upright they touch: a smaller font, to a limit
            # line height is not proportional to the point size: step down (in 4 % steps, so few
            # font sizes are ever made) until the labels fit or the smallest size is reached
            lo = self._min_factor()
            f = math.floor(self.font_factor * px / (full_h * self.LINE) * 25) / 25
            while f > lo and self.style.metrics(f).height() * self.LINE > px:
                f = round(f - 0.04, 2)
            self.font_factor = max(lo, f)
        if self.rotated and self.max_extent > 0:
            # long rotated labels would take the matrix' height (and shrink its rows' labels)
            reach = self._texts()[1] * math.sin(math.radians(self.angle))
            if reach * self.font_factor > self.max_extent:
                self.font_factor = max(self._min_factor(), math.floor(self.max_extent / reach * 25) / 25)
        need = self._need()
        # (1 % of a line's pitch is no overlap one sees: at the ink floor 21 tokens on a 1200×1200 page were
        # 13.9 px apart where a label needed 13.9x, and were named every 2nd)
        self.stride = max(1, math.ceil(need / px - 0.01)) if px > 0 else 1
        if self.stride > 1 and px > 0 and self.style.font_scale > 1 and not is_exporting() \
                and not self.major_only:
            # presented, a label for every token at the docked floor (12 px of type) beats every 2nd at the ink
            # floor: a 64-token map full screen was named every 2nd, where docked it named each one
            docked = max(self.MIN_FACTOR, DOCKED_FLOOR_PT / self.style.font_pt())
            kept = self.font_factor
            f = docked
            while f + 0.04 < kept and self._need_at(f + 0.04) <= px:  # as large as fits, under the ink floor
                f = round(f + 0.04, 2)
            if f < kept and self._need_at(f) <= px:
                self.font_factor, self.stride = f, 1

    def _need_at(self, factor: float) -> float:
        """:meth:`_need` at font ``factor``."""
        kept, self.font_factor = self.font_factor, factor
        try:
            return self._need()
        finally:
            self.font_factor = kept

    def _need(self) -> float:
        """Pixels along the axis one label takes at the chosen font and angle (its neighbour's start)."""
        need = self._metrics().height() * self.LINE
        if self.angle and self.angle < 90:
            need *= self.SLANT_LINE / self.LINE / math.sin(math.radians(self.angle))
        return need
