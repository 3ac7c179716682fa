"""The data-set view's grid a page at a time on real model sizes (issue 36, deliver 5 and 6): a 24-layer × 14-head
grid in the 1280×720 dock (972 × 493 px) was drawn whole without numbers and the mean map went under it, out of view
at 170–190 px; 32 × 32 likewise in the 1920×1080 dock (600 × 676). Now a page of layers × heads with every head's
number written, the mean map beside or under it in the part seen without scrolling; the wheel scrolls the layers,
◀▶ turn the heads, the page follows the selected head."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from dataset_views import render_seeing, scored_view, task_free_trace  # noqa: E402

DOCK_720, DOCK_1080 = (972, 493), (600, 676)


def _on_screen(view, item):
    return view.canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()


def _numbers_shown(view):
    """(layer, head) of every number visible in the grid's cells, and each one's rectangle on screen."""
    return {(int(i.pos().y()), int(i.pos().x())): _on_screen(view, i) for i in view._cell_labels if i.isVisible()}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("m")
    return {shape: task_free_trace(folder, *shape) for shape in ((24, 14), (32, 32))}


@pytest.mark.parametrize("shape, dock, least", [((24, 14), DOCK_720, 260), ((32, 32), DOCK_720, 260),
                                                ((24, 14), DOCK_1080, 260), ((32, 32), DOCK_1080, 260)])
def test_a_page_of_numbered_heads_and_the_mean_map_are_seen_without_scrolling(qtbot, traces, shape, dock, least):
    view = scored_view(qtbot, traces[shape], *dock)
    seen, mean = view.split.scroll.viewport().rect(), _on_screen(view, view.pattern.image)
    assert seen.contains(mean) and min(mean.width(), mean.height()) >= least, (mean, seen)
    assert view.canvas.height() <= seen.height() + 1  # nothing to hunt for below the fold
    assert view.split.side_by_side == (dock == DOCK_720)
    layers, heads = view.page.ranges()
    numbers = _numbers_shown(view)
    # every head shown carries its number, inside the part seen, at the base font
    assert set(numbers) == {(l, h) for l in layers for h in heads}, (len(numbers), layers, heads)
    assert all(seen.contains(r) for r in numbers.values())
    assert all(i.textItem.font().pointSizeF() == view.style.font_pt(1.0) for i in view._cell_labels)
    assert len(layers) >= (10 if dock == DOCK_720 else 3) and len(heads) >= 11 if shape[1] > 11 else len(heads)
    # and every shown layer and head is named
    assert set(view.grid.left.visible_indices()) >= set(layers) and set(view.grid.bottom.visible_indices()) >= set(heads)
    # control: the grid holds more than is shown (a page, not the whole grid shrunk)
    assert len(layers) * len(heads) < shape[0] * shape[1]
    assert view.caption.isVisible() and view.page.text() in view.caption.item.toPlainText()


def test_the_wheel_scrolls_the_layers_and_the_map_stays(qtbot, traces):
    view = scored_view(qtbot, traces[(24, 14)], *DOCK_720)
    layers, _ = view.page.ranges()
    mean = _on_screen(view, view.pattern.image)
    at = view.canvas.mapFromScene(view.grid.vb.sceneBoundingRect().center())

    def wheel(degrees_8ths):
        event = QWheelEvent(QPointF(at), QPointF(view.canvas.mapToGlobal(at)), QPoint(0, 0), QPoint(0, degrees_8ths),
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                            False)
        QApplication.sendEvent(view.canvas.viewport(), event)
        QApplication.processEvents()
        return event.isAccepted()

    assert not wheel(120)  # at the first layers already: the figure's scroll area takes it
    assert view.page.ranges()[0] == layers
    assert wheel(-360)
    assert view.page.ranges()[0] == range(layers.start + 3, layers.stop + 3)  # three notches, three layers
    assert view.grid.vb.viewRange()[1] == [layers.start + 3, layers.stop + 3]
    assert _on_screen(view, view.pattern.image) == mean and view.split.scroll.verticalScrollBar().value() == 0
    assert {l for l, _ in _numbers_shown(view)} == set(view.page.ranges()[0])
    # ▼ to the last layers; ▲ disabled at the top, ▼ at the bottom
    buttons = view._page_controls.buttons
    while buttons["down"].isEnabled():
        buttons["down"].click()
    assert view.page.ranges()[0].stop == 24 and buttons["up"].isEnabled()


def test_the_page_follows_the_selected_head_and_heads_turn_with_the_arrows(qtbot, traces):
    view = scored_view(qtbot, traces[(32, 32)], *DOCK_720)
    buttons = view._page_controls.buttons
    assert buttons["right"].isVisible() and not buttons["left"].isEnabled()
    view.selection.update(layer=30, head=29)  # chosen in another view
    QApplication.processEvents()
    layers, heads = view.page.ranges()
    assert 30 in layers and 29 in heads and view.grid.left.selected == 30 and view.grid.bottom.selected == 29
    buttons["left"].click()
    assert view.page.ranges()[1].stop == heads.start
    # a click on a cell of the page selects that very head (the view range keeps the heads' own indices)
    h = view.page.ranges()[1].start + 1
    view._grid_clicked(layers.start, h)
    assert (view.selection.state.layer, view.selection.state.head) == (layers.start, h)


def test_a_small_model_is_not_paged(qtbot, tmp_path):
    """Control: a grid whose every number fits (3 × 2 heads) is drawn whole, no page buttons."""
    view = scored_view(qtbot, task_free_trace(tmp_path, 3, 2), *DOCK_720)
    assert not view.split.paged and not view.page.paged
    assert not any(b.isVisible() for b in view._page_controls.buttons.values())
    assert len(_numbers_shown(view)) == 6 and "this grid" not in view.caption.item.toPlainText()


@pytest.mark.parametrize("dock", [DOCK_720, DOCK_1080])
def test_a_file_shows_the_page_on_screen_with_its_numbers_and_names_it(qtbot, traces, dock):
    """A file cannot be paged: the export draws the page on screen, each head's number in its cell, and its caption
    says which layers and heads of how many it shows. The page's row under the map is not held to the screen's
    height there (a 1080-px file kept its 151 px: 14 columns of numbers squeezed into a strip, an "L4" under it)."""
    from attnviz.gui.widgets.square_cells import UNLIMITED

    view = scored_view(qtbot, traces[(32, 32)], *dock)
    held = view.figure.layout.rowMaximumHeight(0)
    assert (held < UNLIMITED) == (dock == DOCK_1080)  # control: on screen the page's row under the map is held
    layers, heads = view.page.ranges()
    seen = render_seeing(view, lambda v: {"range": v.grid.vb.viewRange(), "numbers": _numbers_shown(v),
                                          "caption": v.caption.item.toPlainText(),
                                          "row": v.figure.layout.rowMaximumHeight(0)})
    assert seen["range"] == [[heads.start, heads.stop], [layers.start, layers.stop]]
    assert set(seen["numbers"]) == {(l, h) for l in layers for h in heads}
    assert f"layers {layers.start}–{layers.stop - 1} of 32 · heads {heads.start}–{heads.stop - 1} of 32" \
        in seen["caption"]
    assert seen["row"] >= UNLIMITED
    qtbot.waitUntil(lambda: view.figure.layout.rowMaximumHeight(0) == held, timeout=5000)  # held again after
