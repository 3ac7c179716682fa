"""The interactive page's layout in CSS pixels: the script draws with these numbers, and a notebook sizes
its iframe from them (an iframe cannot grow to its content without a script in the notebook, which an
untrusted notebook does not run). Qt-free.
"""

from __future__ import annotations

__all__ = ["LAYOUT", "page_height", "map_side"]

LAYOUT = {
    "map_min": 360, "map_max": 640, "map_cell": 12,  # head map side: 12 px a token, within 360..640
    "map_left": 110, "map_top": 12, "map_bottom": 110, "map_right": 150,  # labels, colour bar
    "grid_width": 900, "grid_min": 24, "grid_max": 96, "grid_left": 40, "grid_top": 24,
    "lines_width": 600, "lines_top": 16, "lines_min": 9, "lines_max": 22, "lines_span": 700,
}
HEADER = 200  # title, subtitle, precision line, controls, figure title and status line, margins
NOTICE = 34  # a notice line above the controls


def map_side(rows: int, cols: int) -> float:
    """The head map's longer side in CSS px (as the script's ``drawHeadMap``)."""
    L = LAYOUT
    return min(L["map_max"], max(L["map_min"], L["map_cell"] * max(rows, cols)))


def page_height(meta: dict) -> int:
    """CSS px the page needs for its opening view, so a notebook's iframe shows it without scrolling."""
    L = LAYOUT
    P = next((p for p in meta["parts"] if p["part"] == meta["start"]["part"]), meta["parts"][0])
    rows, cols, view = P["rows"], P["cols"], meta["view"]
    if view == "head-map":
        side = map_side(rows, cols)
        body = L["map_top"] + side * rows / max(rows, cols) + L["map_bottom"]
    elif view == "model":
        size = max(L["grid_min"], min(L["grid_max"], L["grid_width"] // P["heads"] - 6))
        gap = 20 if P["layers"] and "entropy" in P["layers"][0] else 6
        body = L["grid_top"] + len(P["layers"]) * (size + gap)
    else:
        n = min(max(rows, cols), meta["line_tokens"])
        pitch = max(L["lines_min"], min(L["lines_max"], L["lines_span"] / n))
        body = 2 * L["lines_top"] + pitch * n
    return int(HEADER + NOTICE * len(meta["notices"]) + body + 0.5)
