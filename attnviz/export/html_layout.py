"""The interactive page's layout in CSS pixels: the script draws with these numbers, and a notebook sizes
its iframe from them (an iframe cannot grow to its content without a script in the notebook, which an
untrusted notebook does not run). Qt-free.
"""

from __future__ import annotations

__all__ = ["LAYOUT", "page_height", "map_side", "grid_page"]

LAYOUT = {
    "map_min": 360, "map_max": 640, "map_cell": 12,  # head map side: 12 px a token, within 360..640; a
    # long map in a browser window larger than that takes the window's room (the script's windowRoom)
    "map_left": 110, "map_top": 12, "map_bottom": 110, "map_right": 150,  # labels, colour bar
    # all heads: tiles of at least grid_min px (grid_min_notes with a 12 px number line under each), a page of
    # heads within grid_width and of layers within grid_height; ▲▼◀▶ page through a larger model (30 × 9 heads)
    "grid_width": 1000, "grid_height": 600, "grid_min": 44, "grid_min_notes": 64, "grid_max": 96,
    "grid_max_window": 360,  # a page in a window of its own: tiles up to this, as the window's room allows
    "grid_left": 40, "grid_top": 24, "grid_note_px": 12, "grid_pager": 34,
    "lines_width": 600, "lines_top": 16, "lines_min": 9, "lines_max": 22, "lines_span": 700,
    "lines_max_window": 64,  # a page in a window of its own: rows up to this far apart, as its height allows
    "min_text_px": 12,  # no canvas label smaller (the head map's rows followed the cell down to 6 px)
}
HEADER = 200  # title, subtitle, precision line, controls, figure title and status line, margins
NOTICE = 34  # a notice line above the controls


def map_side(rows: int, cols: int) -> float:
    """The head map's longer side in CSS px (as the script's ``drawHeadMap``)."""
    L = LAYOUT
    return min(L["map_max"], max(L["map_min"], L["map_cell"] * max(rows, cols)))


def grid_page(layers: int, heads: int, notes: bool) -> dict:
    """The all-heads grid's tile side, gap and page (as the script's ``gridPage`` in a notebook's iframe; a browser
    window of its own gives the script its room instead, at least ``grid_width`` wide): tiles never smaller than
    ``grid_min`` (``grid_min_notes`` when each carries its numbers), so a larger model pages rather than shrinks.

    Returns ``size``, ``gap`` (CSS px), ``heads_per_page`` and ``layers_per_page``.
    """
    L = LAYOUT
    gap = 20 if notes else 6  # the number line under each tile
    low = L["grid_min_notes"] if notes else L["grid_min"]
    size = max(low, min(L["grid_max"], L["grid_width"] // max(1, heads) - gap))
    pitch = size + gap
    return {"size": size, "gap": gap, "heads_per_page": max(1, min(heads, L["grid_width"] // pitch)),
            "layers_per_page": even_pages(layers, L["grid_height"] // pitch)}


def even_pages(n: int, most: int) -> int:
    """Layers a page when at most ``most`` fit, balanced over the pages that takes (30 layers, nine fit: 8, 8, 8, 6
    rather than 9, 9, 9, 3), as the script's ``even``. (Heads are not balanced: a page of them takes the width.)"""
    most = max(1, min(n, most))
    return -(-n // -(-n // most))


def page_height(meta: dict) -> int:
    """CSS px the page needs for its opening view, so a notebook's iframe shows it without scrolling."""
    L = LAYOUT
    P = next((p for p in meta["parts"] if p["part"] == meta["start"]["part"]), meta["parts"][0])
    rows, cols, view = P["rows"], P["cols"], meta["view"]
    if view == "head-map":
        side = map_side(rows, cols)
        body = L["map_top"] + side * rows / max(rows, cols) + L["map_bottom"]
    elif view == "model":
        g = grid_page(len(P["layers"]), P["heads"], bool(P["layers"]) and "entropy" in P["layers"][0])
        paged = g["layers_per_page"] < len(P["layers"]) or g["heads_per_page"] < P["heads"]
        body = L["grid_top"] + g["layers_per_page"] * (g["size"] + g["gap"]) + (L["grid_pager"] if paged else 0)
    else:
        n = min(max(rows, cols), meta["line_tokens"])
        pitch = max(L["lines_min"], min(L["lines_max"], L["lines_span"] / n))
        body = 2 * L["lines_top"] + pitch * n
    return int(HEADER + NOTICE * len(meta["notices"]) + body + 0.5)
