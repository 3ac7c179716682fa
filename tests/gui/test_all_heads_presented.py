"""F5 on the All heads dock gives a small grid the slide (issue 36, Deliver 5–6): presented at 1280×720, translate's
2 × 2 grid sat in the left 47 % of the slide, ~650 px blank at its right, its tiles ~190 px and the numbers under
them ~12 px. Presented on one page, the grid is centred, its rows pitched for a tile and its number's line (tiles
larger), the numbers at the axis labels' size, and nothing overlaps (a thick selection frame under a number).
Controls: the same view docked keeps the docked pitch, the notes' 0.8 size and the spare width at the right; a real
model's grid presented stays paged (test_all_heads_pages.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from test_all_heads_pages import _view as pages_view, page_problems  # noqa: E402

SENTENCE = "the big dog sees a small cat"


@pytest.fixture(scope="module")
def trace():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("translate", device="cpu"), text=SENTENCE)


def _view(qtbot, trace, size, presenting: bool):
    """The view as test_all_heads_pages makes it, presented as presentation mode does (its controls row hidden), the
    frame on the lower row, under the upper row's numbers."""
    view = pages_view(qtbot, trace, size, presenting, lines=size[1])
    if presenting:
        view.set_controls_visible(False)
    view.selection.update(layer=1, head=0)
    for _ in range(10):
        QApplication.processEvents()
    return view


def _block(view):
    """(left, right) px of the figure's blank either side of the grid with its layer labels and colour bar."""
    left = view.left.sceneBoundingRect().left()
    right = view.bar.sceneBoundingRect().right()
    width = view.canvas.width()
    return left, width - right


def _tile_px(view) -> float:
    return min(view.grid.mapRectToScene(view.grid.tile_rect(*t)).width() for t in view.grid.drawn())


def _frame_overlaps_numbers(view) -> list:
    """Numbers the selection frame (with its pen's width) runs over."""
    frame = max(view.marks, key=lambda m: m.pen().widthF())
    pen = frame.pen().widthF()
    # (its rectangle mapped, then the cosmetic pen's px: a cosmetic pen's bounding rectangle is in tile units)
    rect = frame.mapRectToScene(frame.rect()).adjusted(-pen / 2, -pen / 2, pen / 2, pen / 2)
    return [t for t in view.notes.drawn() if view.notes.text_rect(*t).intersects(rect)]


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=["720", "1080"])
def test_a_small_grid_presented_is_centred_with_larger_tiles_and_numbers(qtbot, trace, size):
    from attnviz.gui.views.all_heads_pages import PITCH_Y

    view = _view(qtbot, trace, size, True)
    what = f"translate presented at {size[0]}×{size[1]}"
    assert view.page_text() == "" and len(view.grid.drawn()) == 4, what
    left, right = _block(view)
    assert abs(left - right) <= 0.06 * size[0], f"{what}: {left:.0f} px blank left, {right:.0f} px right"
    tile = _tile_px(view)
    assert tile >= 0.28 * size[1], f"{what}: tiles of {tile:.0f} px"  # 190 px at 720 before: 0.264
    assert view._pitch_y < PITCH_Y - 0.1, f"{what}: rows pitched {view._pitch_y:.2f}"
    axis_pt = view.style.font_pt(1.0)
    assert view.notes.font.pointSizeF() >= axis_pt - 0.05, f"{what}: numbers {view.notes.font.pointSizeF()} pt"
    assert not page_problems(view, what)
    assert not _frame_overlaps_numbers(view), f"{what}: the selection frame runs over {_frame_overlaps_numbers(view)}"


def test_docked_the_grid_keeps_the_docked_pitch_at_the_left(qtbot, trace):
    """Control: docked (the 1280×720 window's dock, about), the pitch, note size and left placement are as before."""
    from attnviz.gui.views.all_heads_pages import NOTE_FACTOR, NOTE_MIN_PT, PITCH_Y

    view = _view(qtbot, trace, (972, 493), False)
    left, right = _block(view)
    assert left < 30 < right, (left, right)
    assert view._pitch_y == PITCH_Y
    assert view.notes.font.pointSizeF() == pytest.approx(max(view.style.font_pt(NOTE_FACTOR), NOTE_MIN_PT))
    assert not page_problems(view, "translate docked") and not _frame_overlaps_numbers(view)


def test_a_real_size_grid_presented_stays_paged_and_hides_its_page_buttons(qtbot, tmp_path):
    """30 × 9 presented: paged at the docked pitch and note size (what its pages are fitted for), and the ▲▼
    buttons stay hidden (they came back above the slide when the presented page's shape was applied); back docked,
    they are shown."""
    import real_sizes
    from attnviz.gui.views.all_heads_pages import NOTE_FACTOR, NOTE_MIN_PT, PITCH_Y

    view = _view(qtbot, real_sizes.trace_of(real_sizes.build("30x9", tmp_path / "m")), (1920, 1080), True)
    assert view.page_text() and view._pitch_y == PITCH_Y
    assert view.notes.font.pointSizeF() <= max(view.style.font_pt(NOTE_FACTOR), NOTE_MIN_PT) + 0.05
    shown = [k for k, b in view.page_buttons.items() if b.isVisible()]
    assert not shown, f"presented, the page buttons {shown} are on screen"
    view.set_controls_visible(True)
    QApplication.processEvents()
    assert view.page_buttons["down"].isVisible(), "control: docked again, ▼ is back"
    assert not page_problems(view, "30 × 9 presented")
