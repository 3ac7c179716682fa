"""Where the rollout view's four image panels go: two by two, one row, or the input large beside the three maps.

A 16:9 slide's body is about twice as wide as it is tall: two by two (aspect 1) and one row (aspect 4) both left
a third of the page blank (issue 36 item 10: 400-px pictures on a 1920×1080 slide, 30 % of it covered). The input
large on the left, the three maps beside it (raw and rollout over gradient rollout), fills such a page.
:func:`choose` estimates each arrangement's sides from the room, the captions and the bars, and picks the one that
covers the most of it among those whose maps are within 20 % of the largest maps any arrangement draws: a slide
trades an eighth of the maps' side for 1.6 times the picture (48 % of the page, not 30 %), a wide dock keeps its
maps twice as large in a row.
Pure arithmetic (no Qt), so the rule is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LAYOUTS", "ONE_BAR", "Estimate", "choose", "estimates"]

# (row, column, rows spanned) of input, raw attention, rollout, gradient rollout
LAYOUTS = {
    "grid": ((0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1)),
    "row": ((0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 1)),
    "beside": ((0, 0, 2), (0, 1, 1), (0, 2, 1), (1, 1, 1)),
}
# on one colour scale the bar drawn is this map's: at the figure's right edge, beside no other map in its row
ONE_BAR = {"grid": "grad", "row": "grad", "beside": "rollout"}
# a map may be this much smaller than the largest any arrangement draws when that covers more of the room
MAP_SLACK = 0.80
# the input beside the maps only when it is drawn clearly larger than they are (else it is two by two, less tidy)
BESIDE_AT_LEAST = 1.25


@dataclass(frozen=True)
class Estimate:
    name: str
    map_side: float  # height of each map's picture, in the room's pixels
    input_side: float  # height of the input's picture
    area: float  # the four pictures' area


def _bars_in(name: str, per_map: bool) -> int:
    """How many columns of ``name`` hold a drawn colour bar (each map's, or the one of ONE_BAR)."""
    return len({col for _, col, _ in LAYOUTS[name][1:]}) if per_map else 1


def estimates(w: float, h: float, aspect: float, caption_in: float, caption_map: float, bar: float,
              per_map: bool, spacing: float = 6.0) -> list[Estimate]:
    """Each arrangement's picture sides in a ``w`` × ``h`` room. ``aspect``: picture width per unit of height;
    ``caption_in``/``caption_map``: the captions' heights; ``bar``: a colour bar's width with its gap; ``per_map``: a bar
    beside every map (else one)."""
    out = []
    # every column costs the grid's spacing and its cell's (before the bar's column, drawn or not), the two
    # gutters the grid's: left out, "beside" was estimated ~30 px too wide and its maps came out 15 % smaller
    w = w - 2 * spacing
    top = max(caption_in, caption_map)  # the first row's captions are as tall as its tallest
    m = min((w - 4 * spacing - _bars_in("grid", per_map) * bar) / 2 / aspect, (h - spacing - top - caption_map) / 2)
    out.append(Estimate("grid", m, m, 4 * aspect * m * m))
    m = min((w - 8 * spacing - _bars_in("row", per_map) * bar) / 4 / aspect, h - top)
    out.append(Estimate("row", m, m, 4 * aspect * m * m))
    m = (h - spacing - 2 * caption_map) / 2
    beside = w - 6 * spacing - _bars_in("beside", per_map) * bar  # width of the three pictures' columns
    i = min(h - caption_in, beside / aspect - 2 * m)
    if i < m:  # too narrow for the input to be larger: three equal columns
        m = i = beside / 3 / aspect
    out.append(Estimate("beside", m, i, aspect * (3 * m * m + i * i)))
    return out


def choose(found: list[Estimate]) -> str:
    """The arrangement that covers most among those whose maps are within MAP_SLACK of the largest."""
    largest = max(e.map_side for e in found)
    fit = [e for e in found if e.map_side >= MAP_SLACK * largest and e.map_side > 0
           and (e.name != "beside" or e.input_side >= BESIDE_AT_LEAST * e.map_side)]
    return max(fit, key=lambda e: e.area).name if fit else "grid"
