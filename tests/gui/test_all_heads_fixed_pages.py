"""The All heads grid's pages are fixed (head k on page k // heads-per-page, layer k on page k // layers-per-page), the
last page holding what is left: selecting a head shows its page, and the pages never overlap nor shift with the
selection. Before, a page was clamped to end at the last head: at 32 heads, five a page, selecting H31 showed
H27–H31 and a page back H22–H26, pages that a first-page start never shows. Checked for the real shapes' head
counts (30 × 9, 24 × 14, 32 × 32) docked and in a 1280×720 window's dock."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import synthetic_trace  # noqa: E402


def _view(qtbot, L: int, H: int, size):
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(synthetic_trace(6, n_layers=L, n_heads=H))
    view.ensure_current()
    for _ in range(5):
        QApplication.processEvents()
    return view


def _shown(view) -> tuple[range, range]:
    """The layers and heads the page draws, from the tiles painted."""
    drawn = view.grid.drawn()
    layers, heads = sorted({t[0] for t in drawn}), sorted({t[1] for t in drawn})
    return range(layers[0], layers[-1] + 1), range(heads[0], heads[-1] + 1)


def _pages(view, direction: str, back: str) -> list[range]:
    """Every page met turning ``direction`` from the first (the axis ``direction`` pages)."""
    axis = 0 if direction == "down" else 1
    for _ in range(64):
        view.turn_page(back)
    pages = [_shown(view)[axis]]
    for _ in range(64):
        view.turn_page(direction)
        page = _shown(view)[axis]
        if page == pages[-1]:
            break
        pages.append(page)
    return pages


@pytest.mark.parametrize("size", [(740, 700), (560, 420)], ids=["1920x1080 dock", "1280x720 dock"])
@pytest.mark.parametrize("L, H", [(30, 9), (24, 14), (32, 32)])
def test_pages_are_fixed_and_the_selected_heads_page_is_shown(qtbot, L, H, size):
    view = _view(qtbot, L, H, size)
    rows, cols = view.page_shape()
    assert rows < L, "the grid is paged (else nothing is checked here)"
    for direction, back, n, per in (("down", "up", L, rows), ("right", "left", H, cols)):
        pages = _pages(view, direction, back)
        # a partition of the layers (heads) into pages starting at multiples of the page's size
        assert [p.start for p in pages] == list(range(0, n, per)), (direction, pages)
        assert sum(len(p) for p in pages) == n and pages[-1].stop == n
        # filled evenly: no smaller page gives as few pages (32 heads ten a page left H30–H31 alone on the last)
        assert per == -(-n // len(pages)), (direction, per, len(pages))
    for layer, head in ((L - 1, H - 1), (0, 0), (L // 2, H - 1), (L - 1, 0), (L - 1, H - 1)):
        view.selection.update(layer=layer, head=head)
        for _ in range(3):
            QApplication.processEvents()
        layers, heads = _shown(view)
        assert layers.start == layer // rows * rows and layer in layers, (layer, layers)
        assert heads.start == head // cols * cols and head in heads, (head, heads)
        assert view.left.labels == [f"L{i}" for i in layers] and view.top.labels == [f"H{i}" for i in heads]
        assert f"layers {layers.start}" in view.page_text()
    # a page back from the last: the page before it, never one overlapping it
    view.turn_page("up")
    assert _shown(view)[0].start == ((L - 1) // rows - 1) * rows


def test_the_last_pages_tiles_keep_the_pages_size(qtbot):
    view = _view(qtbot, 32, 32, (740, 700))
    first = view.grid.mapRectToScene(view.grid.tile_rect(0, 0))
    view.selection.update(layer=31, head=31)
    for _ in range(3):
        QApplication.processEvents()
    last = view.grid.mapRectToScene(view.grid.tile_rect(31, 31))
    # (within 1.5 px: the last page's two-digit axis labels are wider; a range of its two heads would double them)
    assert abs(last.width() - first.width()) < 1.5 and abs(last.height() - first.height()) < 1.5


def test_no_last_page_holds_a_remnant():
    """32 layers fitting 6 a page gave 6, 6, 6, 6, 6, 2: the 32×32 export opened on the default head's page,
    L30–L31, with ~55 % of the slide blank (auditor). Every last page is at least two-thirds full."""
    from attnviz.gui.views.all_heads_pages import even_page

    for n in range(1, 65):
        for fit in range(1, n + 1):
            p = even_page(n, fit)
            assert 1 <= p <= fit
            last = n - (-(-n // p) - 1) * p
            if fit >= 3:
                assert last >= 2 / 3 * p or p == max(range(-(-fit // 2), fit + 1), key=lambda q: (
                    (n - (-(-n // q) - 1) * q) / q, q)), (n, fit, p, last)
    assert even_page(32, 6) == 4 and even_page(9, 7) == 5 and even_page(32, 10) == 8
    assert even_page(14, 8) == 7 and even_page(30, 6) == 6  # control: an even fit is kept
