"""How every view looks: one small dataclass the views read, so one switch restyles them all.

The presentation preset is for a lecture hall (large fonts, thick lines); the dark preset for dark
slides. Colour maps are named (``pg.colormap.get(name)``); the default viridis is colour-blind safe.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

__all__ = ["ViewStyle", "PRESETS", "HEAD_COLOURS", "head_colour", "colour_lut", "MASKED_INDEX", "SCALE_MODES"]

# Okabe & Ito's colour-blind-safe palette (its yellow, invisible on white, left out), then the darker
# colours of Paul Tol's "muted" set: saturated enough that lines of several heads stay apart instead
# of blending into grey, and distinct on light and dark backgrounds.
HEAD_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#332288",
                "#999933")

# How a heatmap's colours map to numbers. "auto" lets each view use its own default.
SCALE_MODES = ("auto", "fixed", "per-map", "shared")
_SCALE_ALIASES = {"unit": "fixed", "max": "per-map"}  # the names of earlier versions

# Heatmaps are drawn as uint8 indices through a 256-entry lookup table: 0..254 are the colour map,
# 255 is reserved for masked cells (−∞ before the softmax), so masking never looks like "0".
MASKED_INDEX = 255


@dataclass(frozen=True)
class ViewStyle:
    """Appearance shared by all views.

    Parameters
    ----------
    cmap : name of a pyqtgraph colour map (viridis, cividis, inferno, magma, plasma, ...).
    font_scale : multiplies every font size (1.0 = 9 pt base).
    line_width : width in pixels of lines (token lines, outlines, highlights).
    background, foreground : figure colours.
    masked : fill colour of masked cells; the hatch is drawn in ``foreground`` over it.
    diverging_cmap : colour map of signed data (similarities, encodings), drawn centred on 0.
    colour_bar : show colour bars.
    scale : how heatmaps map values to colours: "fixed" (0–1, comparable across heads, layers and
        models), "per-map" (0 to each map's own maximum), "shared" (0 to the largest value of all
        heads shown together) or "auto" (each view's default). "unit"/"max" are read as fixed/per-map.
    preset : the name this style was made from.
    """

    cmap: str = "viridis"
    diverging_cmap: str = "CET-D1A"  # blue–white–red, colour-blind safe (the two ends differ in lightness)
    font_scale: float = 1.0
    line_width: float = 1.0
    background: str = "#ffffff"
    foreground: str = "#202020"
    masked: str = "#c8c8c8"
    highlight: str = "#ffffff"
    colour_bar: bool = True
    scale: str = "auto"
    preset: str = "default"

    BASE_PT = 9.0

    def __post_init__(self):
        scale = _SCALE_ALIASES.get(self.scale, self.scale)
        if scale not in SCALE_MODES:
            raise ValueError(f"unknown colour scale {self.scale!r}; choose one of {', '.join(SCALE_MODES)}")
        object.__setattr__(self, "scale", scale)  # frozen dataclass: normalise the alias once

    def font_pt(self, factor: float = 1.0) -> float:
        """Point size of a font ``factor`` times the base size."""
        return self.BASE_PT * self.font_scale * factor

    def font(self, factor: float = 1.0, bold: bool = False):
        """A QFont of the scaled size (a copy: Qt and pyqtgraph items may change the font they get)."""
        from PySide6.QtGui import QFont

        return QFont(_font(round(self.font_pt(factor), 2), bold))

    def metrics(self, factor: float = 1.0, bold: bool = False):
        """QFontMetricsF of :meth:`font` (shared)."""
        return _metrics(round(self.font_pt(factor), 2), bold)

    def with_(self, **changes) -> "ViewStyle":
        """A copy with some fields changed (the style is immutable so views can compare it)."""
        return replace(self, **changes)

    @classmethod
    def preset_named(cls, name: str) -> "ViewStyle":
        """One of :data:`PRESETS` by name; unknown names raise ``KeyError`` listing the known ones."""
        try:
            return PRESETS[name]
        except KeyError:
            raise KeyError(f"unknown style preset {name!r}; known: {', '.join(PRESETS)}") from None


PRESETS: dict[str, ViewStyle] = {
    "default": ViewStyle(),
    "presentation": ViewStyle(font_scale=1.7, line_width=2.5, preset="presentation"),
    "dark": ViewStyle(background="#1b1b1f", foreground="#e8e8e8", masked="#4a4a4a", preset="dark"),
}


def head_colour(head: int) -> str:
    """Colour of head ``head`` in multi-head views (cycles after nine heads)."""
    return HEAD_COLOURS[head % len(HEAD_COLOURS)]


@lru_cache(maxsize=64)
def _font(pt: float, bold: bool):
    from PySide6.QtGui import QFont

    f = QFont()
    f.setPointSizeF(pt)
    f.setBold(bold)
    return f


@lru_cache(maxsize=64)
def _metrics(pt: float, bold: bool):
    from PySide6.QtGui import QFontMetricsF

    return QFontMetricsF(_font(pt, bold))


@lru_cache(maxsize=32)
def _lut(cmap: str, masked: str) -> np.ndarray:
    import pyqtgraph as pg
    from PySide6.QtGui import QColor

    cm = pg.colormap.get(cmap)
    lut = np.empty((256, 4), dtype=np.uint8)
    lut[:MASKED_INDEX] = cm.getLookupTable(0.0, 1.0, MASKED_INDEX, alpha=True)
    c = QColor(masked)
    lut[MASKED_INDEX] = (c.red(), c.green(), c.blue(), 255)
    lut.setflags(write=False)
    return lut


def colour_lut(style: ViewStyle, diverging: bool = False) -> np.ndarray:
    """(256, 4) RGBA lookup table: indices 0..254 the colour map, 255 the masked colour.

    diverging : use the style's diverging map (for signed data drawn symmetric around 0).
    """
    return _lut(style.diverging_cmap if diverging else style.cmap, style.masked)
