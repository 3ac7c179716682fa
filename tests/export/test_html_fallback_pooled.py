"""The still picture of a long (pooled) HTML page: drawn from the head's max-pooled overview, read a block of
rows at a time (never a whole layer), complete, and a lone column of 1.0 visible in it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.selection import SelectionState  # noqa: E402
from tests.export.long_maps import ColumnTrace  # noqa: E402

T = 3000
COLUMNS = [1234, 2998]


def _picture(trace, head: int):
    from PySide6.QtGui import QImage

    from attnviz.export.html_fallback import FALLBACK_SIZE, fallback_picture
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    style = export_style()
    state = SelectionState(head=head)
    _, meta = html_page(trace, colour_lut(style), view="head-map", head=head, style=style, max_bytes=4 * 2**20,
                        fallback=lambda m: fallback_picture(trace, state, style, m))
    img = QImage.fromData(meta["fallback_png"], "PNG")
    assert (img.width(), img.height()) == FALLBACK_SIZE and meta["pooled"]
    return img, colour_lut(style)


def _colour_at_key(img, key: int, row_frac: float) -> tuple[int, int, int]:
    from attnviz.export.html_fallback import FALLBACK_SIZE

    W, H = FALLBACK_SIZE
    side = H - 70
    x0, y0 = (W - side) / 2, 34
    cs = -(-T // side)  # keys a pixel column of the pooled map stands for
    n_cols = -(-T // cs)
    x = int(x0 + (key // cs + 0.5) * side / n_cols)
    c = img.pixelColor(x, int(y0 + row_frac * side))
    return c.red(), c.green(), c.blue()


def test_the_pooled_picture_shows_a_lone_column_and_reads_blocks_only():
    trace = ColumnTrace(T, n_layers=1, columns=COLUMNS)
    img, lut = _picture(trace, head=0)
    top, bottom = tuple(int(v) for v in lut[254][:3]), tuple(int(v) for v in lut[0][:3])
    for frac in (0.05, 0.5, 0.95):  # every height of the map: the column is there, complete
        assert _colour_at_key(img, 1234, frac) == top
        assert _colour_at_key(img, 600, frac) == bottom
    assert trace.largest_block <= len(COLUMNS) * 512 * T  # a block of rows at a time, never a whole layer
    # negative control: the other head's picture has no column at key 1234
    other, _ = _picture(ColumnTrace(T, n_layers=1, columns=COLUMNS), head=1)
    assert _colour_at_key(other, 1234, 0.5) == bottom and _colour_at_key(other, 2998, 0.5) == top
