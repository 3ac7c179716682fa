"""The All heads grid of an input too long to compute every head at once: the page on screen is max-pooled from
the trace's on-demand probabilities on the views' lane, head by head; paging computes the next page and drops the
work for the page left. The overviews equal a max-pool of ``Trace.probs`` (a planted column of 1.0 stays 1.0,
which a mean-pool would not keep)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


T = 600  # above the on-demand threshold (asserted below)


@pytest.fixture(scope="module")
def long_trace():
    from tests.gui.long_llama_trace import long_llama_trace

    return long_llama_trace(T)


def test_overview_equals_max_pool_of_probs(long_trace):
    from attnviz.analysis.distance import attention_entropy
    from attnviz.analysis.head_overview import head_overview

    kr = kc = 10  # 600 positions in at most 64 cells: 60 cells of 10
    for layer in (0, 5):
        whole = long_trace.probs(layer)  # (H, T, T), small here
        for head in range(2):
            got = head_overview(long_trace, layer, "self", head)
            want = whole[head].reshape(T // kr, kr, T // kc, kc).max(axis=(1, 3))
            np.testing.assert_allclose(got.pooled, want, rtol=0, atol=1e-6)
            assert got.entropy == pytest.approx(attention_entropy([whole.astype(np.float64)])[0, head], abs=1e-6)
    # negative control: another head's pooling is not this one's
    assert np.abs(head_overview(long_trace, 0, "self", 1).pooled - head_overview(long_trace, 0, "self", 0).pooled).max() > 1e-3


class _Planted:
    """The trace with key column ``col`` set to 1.0 for every query (what a sink head looks like)."""

    def __init__(self, trace, col: int):
        self.trace, self.col, self.grid = trace, col, None

    def probs_shape(self, *a, **k):
        return self.trace.probs_shape(*a, **k)

    def probs(self, *a, **k):
        block = np.array(self.trace.probs(*a, **k))
        block[..., self.col] = 1.0
        return block


def test_a_planted_column_of_one_stays_visible(long_trace):
    from attnviz.analysis.head_overview import head_overview

    col = 437
    got = head_overview(_Planted(long_trace, col), 3, "self", 1).pooled
    assert (got[:, col // 10] == 1.0).all()
    # the control: a mean over each cell's 10 × 10 positions dilutes the column to about a tenth
    block = _Planted(long_trace, col).probs(3, "self", heads=1)[0]
    mean = block.reshape(T // 10, 10, T // 10, 10).mean(axis=(1, 3))
    assert mean[:, col // 10].max() < 0.5


def _long_view(qtbot, monkeypatch, trace, height=330):
    from tests.gui.long_llama_trace import long_grid_view

    return long_grid_view(qtbot, monkeypatch, trace, height)


def _page(view):
    (l0, h0), (rows, cols) = view._page, view.page_shape()
    return [(a, b) for a in range(l0, l0 + rows) for b in range(h0, h0 + cols)]


def test_the_page_on_screen_is_drawn_max_pooled(qtbot, monkeypatch, long_trace):
    from attnviz.gui.style import colour_lut
    from attnviz.gui.views.heatmap_data import colourize, quantize

    view = _long_view(qtbot, monkeypatch, long_trace)
    page = _page(view)
    assert 0 < len(page) < 12, page  # a page, not every head
    qtbot.waitUntil(lambda: view._long is not None and all(view._long.done[h] for h in page), timeout=300_000)
    assert view.caption.text.startswith("max-pooled to 60×60 cells of 10×10 positions each")
    assert "computing" not in view.title_item.text
    assert view.bar.levels == (0.0, 1.0) and "fixed scale 0–1" in view.bar.label
    lut = colour_lut(view.style)
    for layer, head in page:
        want = view._long.pooled[layer, head]
        np.testing.assert_allclose(want, long_trace.probs(layer, heads=head)[0].reshape(60, 10, 60, 10).max(axis=(1, 3)),
                                   rtol=0, atol=1e-6)
        masked = view._long.masked
        drawn = colourize(quantize(want, 1.0, masked), lut)
        np.testing.assert_array_equal(view.grid.tile(layer, head), drawn)
        assert view.note_text(layer, head) != "…"
    off = [(a, b) for a in range(6) for b in range(2) if (a, b) not in page]
    assert off and not any(view._long.done[h] for h in off)  # only the page's heads were computed
    assert all(view.note_text(*h) == "…" for h in off)


def test_paging_computes_the_next_page_and_drops_the_last(qtbot, monkeypatch, long_trace):
    view = _long_view(qtbot, monkeypatch, long_trace)
    first = _page(view)
    assert first and not view._long.done.any()
    view.turn_page("down")  # before the first page's job delivered anything
    second = _page(view)
    assert set(first).isdisjoint(second)
    qtbot.waitUntil(lambda: all(view._long.done[h] for h in second), timeout=300_000)
    assert not any(view._long.done[h] for h in first)  # its work was dropped, not finished
    view.turn_page("up")  # and paging back computes it (the control: the first page can be computed)
    qtbot.waitUntil(lambda: all(view._long.done[h] for h in first), timeout=300_000)


def test_the_table_shows_computed_heads_and_dots_for_the_rest(qtbot, monkeypatch, long_trace):
    view = _long_view(qtbot, monkeypatch, long_trace)
    page = _page(view)
    qtbot.waitUntil(lambda: all(view._long.done[h] for h in page), timeout=300_000)
    view.show_table(True)
    rows = {}
    for i in range(view.table.rowCount()):
        layer, head = view.table.item(i, 0).data(0x0100)  # Qt.UserRole
        rows[(layer, head)] = [view.table.item(i, j).text() for j in range(2, 5)]
    for h in page:
        assert rows[h][0] == str(round(float(view._long.entropy[h]), 4))
    off = [h for h in rows if h not in page]
    assert off and all(rows[h] == ["…", "…", "…"] for h in off)  # never a 0 for a head not computed


def test_an_export_draws_every_head_of_its_page(qtbot, monkeypatch, long_trace):
    """A slide is laid out for its own size (another page than the dock's): its heads are computed before it is
    drawn, never left blank."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    view = _long_view(qtbot, monkeypatch, long_trace, height=260)
    view.ensure_current()
    shown = set(_page(view))
    image = QImage(1200, 1400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    seen = []
    real = view._apply_page

    def spy():
        real()
        seen.append((set(_page(view)), {h for h in _page(view) if view._long.done[h]}))
    monkeypatch.setattr(view, "_apply_page", spy)
    view.render_figure(painter, QRectF(0, 0, 1200, 1400))
    painter.end()
    page, done = max(seen, key=lambda s: len(s[0]))
    assert len(page) > len(shown)  # the slide's page is larger than the dock's (the control: it needed more heads)
    assert done == page


def test_above_the_stated_size_only_the_selected_head_is_computed(qtbot, monkeypatch, long_trace):
    """At 131,072 tokens a head is ~1,000 CPU-seconds: a page of 8 heads showed "0 of 8 heads done" after 10 min.
    Above SELECTED_ONLY_WEIGHTS only the selected head is computed, the title and caption say so, and selecting
    another head computes that one. Control: below the size the page's other heads are computed too."""
    from attnviz.gui.views import all_heads_long

    monkeypatch.setattr(all_heads_long, "SELECTED_ONLY_WEIGHTS", T * T - 1)  # this input is over it
    view = _long_view(qtbot, monkeypatch, long_trace)
    page = _page(view)
    assert len(page) > 1
    sel = (view.res.layer, view.res.head)
    assert "computing the selected head" in view.title_item.text
    qtbot.waitUntil(lambda: view._long.done[sel], timeout=300_000)
    qtbot.waitUntil(lambda: not view.background_pending, timeout=300_000)  # all the work asked for is in
    assert int(view._long.done.sum()) == 1  # the page's other heads were not computed
    assert "computing" not in view.title_item.text
    caption = view.caption.text
    assert f"{T:,} positions: only the selected head is computed ({T:,} × {T:,} weights a head" in caption
    took = view._long.seconds[sel]  # measured while it was computed
    assert f"L{sel[0]}·H{sel[1]} took {int(took // 60)} min {int(took % 60)} s here" in caption
    other = next(h for h in page if h != sel)
    assert "select it to compute it" in view._long_info(*other)
    view.selection.update(layer=other[0], head=other[1])
    qtbot.waitUntil(lambda: view._long.done[other], timeout=300_000)
    assert int(view._long.done.sum()) == 2
    # control: at the default size (this input far below it) the whole page is asked for
    monkeypatch.setattr(all_heads_long, "SELECTED_ONLY_WEIGHTS", T * T)
    assert len(view._page_heads()) == len(page)
