"""The data-set view on real model sizes (issue 36, deliver 5): a 30-layer × 9-head decoder's grid in the app's docks
(1280×720: ~972 × 493 px; 1920×1080: ~600 × 676 px) named its heads only under layer 29, scrolled out of view, and
both colour bars' words were centred below the part seen ("ean weight / n maximum", "core / 1"); 32 heads in a
narrower dock shrank their labels. Each check has a control showing the measure can fail."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from dataset_views import render_seeing, scored_view, task_free_trace  # noqa: E402

# the Data set dock tabbed beside the head map at 1280×720, in the right group at 1920×1080, and a narrow right group
# at 1280×720 (there the grid scrolls sideways too, and that scroll bar takes height from the part seen)
DOCKS = {"1280x720": (972, 493), "1920x1080": (600, 676), "narrow": (274, 494)}


def _on_screen(view, item):
    """The item's rectangle in the canvas's pixels."""
    return view.canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()


def _seen(view):
    """The canvas's part seen without scrolling (the figure opens scrolled to its top-left)."""
    return view.split.scroll.viewport().rect()


@pytest.fixture(scope="module")
def trace_30x9(tmp_path_factory):
    return task_free_trace(tmp_path_factory.mktemp("m"), 30, 9)


@pytest.mark.parametrize("dock", DOCKS)
def test_every_head_is_named_in_view_over_a_thirty_layer_grid(qtbot, trace_30x9, dock):
    view = scored_view(qtbot, trace_30x9, *DOCKS[dock])
    heads = view.grid.bottom
    assert heads.orientation == "top" and _seen(view).contains(_on_screen(view, heads)), \
        (_on_screen(view, heads), _seen(view))
    assert list(heads.visible_indices()) == list(range(9)) and heads.font_factor == 1.0
    assert [heads._text(i) for i in range(9)] == [f"H{h}" for h in range(9)]
    # control: the grid holds more layers than are shown (layer 29 is scrolled to), so a label under it was out of view
    assert 29 not in view.page.ranges()[0]
    # the exact number on hover, any cell the user scrolls to
    view._grid_hovered(29, 8)
    value = view.score_table()[29, 8]
    assert view.status.text() == f"layer 29, head 8: {view._label(view.score)} {value:.3f}"


@pytest.mark.parametrize("dock", DOCKS)
def test_the_colour_bars_are_seen_whole(qtbot, trace_30x9, dock):
    """Each visible bar (its ends, ticks and the words centred on it) that starts in the part seen without scrolling
    lies in it whole; one further down (the mean map's, under the grid) is no taller than that part. The grid's own
    bar gave way to each shown head's number (a page at a time, test_views_dataset_pages.py)."""
    view = scored_view(qtbot, trace_30x9, *DOCKS[dock])
    seen = _seen(view)
    bars = [m.bar for m in (view.grid, view.pattern) if m.bar.isVisible()]
    assert bars == [view.pattern.bar]
    for bar in bars:
        rect = _on_screen(view, bar)
        assert seen.contains(rect) if seen.contains(rect.topLeft()) else rect.height() <= seen.height(), (rect, seen)
    assert _on_screen(view, view.pattern.bar).height() >= 150  # ends, ticks between and its words in a few lines
    # the grid's scale is in its cells' numbers (and the caption)
    assert view._cell_labels and all(item.isVisible() for item in view._cell_labels)
    assert "head grid colours: fixed scale 0–1" in view.caption.item.toPlainText()


def test_thirty_two_heads_keep_full_size_labels_a_page_at_a_time(qtbot, tmp_path):
    """Llama-8B's 32 heads: in a 460-px dock the labels shrank to fit, then the figure scrolled across; now a page of
    heads, each named at full size, fits across (◀▶ turn it). Control: the page holds fewer than the 32 heads."""
    trace = task_free_trace(tmp_path, 32, 32)
    for width in (600, 460):
        view = scored_view(qtbot, trace, width, 676)
        heads, shown = view.grid.bottom, view.page.ranges()[1]
        assert set(heads.visible_indices()) >= set(shown) and heads.font_factor == 1.0, (width, heads.font_factor)
        assert 8 <= len(shown) < 32 and view.canvas.width() <= _seen(view).width(), (width, shown, _seen(view))


def test_the_mean_map_beside_a_thirty_layer_grid_is_seen_whole(qtbot, trace_30x9):
    """1280×720: beside the grid (a 770-px figure in 434 px seen) the mean map took the grid's row height and its
    last rows (30–36) were cut off at the scroll area's bottom. Control: the grid itself still scrolls."""
    view = scored_view(qtbot, trace_30x9, *DOCKS["1280x720"])
    seen, mean = _seen(view), _on_screen(view, view.pattern.image)
    assert view.split.side_by_side and seen.contains(mean) and mean.height() >= 250, (mean, seen)
    assert _on_screen(view, view.grid.image).bottom() > seen.bottom()


def test_a_file_gets_the_whole_figure_not_the_screens_fitting(qtbot, tmp_path):
    """An export lays the figure out for its page, where nothing scrolls: bars and the mean map held to the screen's
    434 px drew a 351-px bar beside a 500-px grid and a mean map half its room. A 32-layer × 2-head grid (64 heads,
    each number written, not paged) still scrolls beside its map at 1280×720. Control: on screen the map is held."""
    from attnviz.gui.widgets.square_cells import UNLIMITED

    view = scored_view(qtbot, task_free_trace(tmp_path, 32, 2), *DOCKS["1280x720"])
    assert not view.split.paged and view.split.side_by_side
    assert view.pattern.maximumHeight() < UNLIMITED  # control: fitted to the scroll area
    seen = render_seeing(view, lambda v: {"map": v.pattern.maximumHeight(),
                                          "pattern": (v.pattern.bar.height(), v.pattern.vb.height())})
    assert seen["map"] >= UNLIMITED, seen
    assert seen["pattern"][0] >= 0.9 * seen["pattern"][1], seen
    qtbot.waitUntil(lambda: view.pattern.maximumHeight() < UNLIMITED, timeout=5000)  # fitted again


def test_a_few_heads_beside_the_map_keep_their_title_on_two_lines_where_the_map_leaves_room(qtbot, tmp_path):
    """1280×720 (~972 × 493): the grid's column beside the map was as wide as 2 heads' labels, and its title took five
    lines while ~380 px beside the height-bound map stood empty. Control: the 1920×1080 dock (600 px, no room to
    spare) keeps the map as large as before (~240 px)."""
    trace = task_free_trace(tmp_path, 3, 2)
    lines = {}
    for dock in ("1280x720", "1920x1080"):
        view = scored_view(qtbot, trace, *DOCKS[dock])
        assert view.split.side_by_side
        lines[dock] = view.grid.title.height() / view.style.metrics(1.2).height()
        mean = _on_screen(view, view.pattern.image)
        assert min(mean.width(), mean.height()) >= 230, (dock, mean)
    assert lines["1280x720"] <= 2.6, lines
