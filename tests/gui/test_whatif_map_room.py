"""What if in a 1280×720 window (issue 36): the switches stood in a 340 px column beside the figure, and the two
attention maps, fitted to the ~480 px viewport, drew ~130 px cells with ~10 px token labels (coref, translate).
Narrow, the switches now wrap in a bar above the figure and each map keeps ≥ 250 px cells (the figure scrolls to
them); wide (1920×1080), the switches stay beside it. An export lays the figure out at its page, not at the
on-screen floor."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from whatif_fixtures import whatif_panel  # noqa: E402

DOCK_720 = (980, 470)  # the Walkthrough tab's area in a 1280×720 window (test_walkthrough_side_editors)
DOCK_1080 = (1500, 820)


def _panel(qtbot, model: str, size):
    return whatif_panel(qtbot, model, size)


def _cells(panel, name: str) -> tuple[float, float]:
    area, _, _ = panel.grids[name]._cells()
    return area.width(), area.height()


@pytest.mark.parametrize("model", ["coref", "translate"])
def test_maps_get_the_room_in_a_1280x720_window(qtbot, model):
    from layout_audit import grid_problems

    panel = _panel(qtbot, model, DOCK_720)
    sw = panel._switches
    assert sw.narrow and sw.bar.isVisible() and not panel.splitter.widget(0).isVisible()
    for g in sw.groups:  # every switch whole inside the bar
        assert g.isVisible() and g.geometry().right() <= sw.bar.width(), g
    # the ablation boxes in one line ("L0 h0 … L1 h0 …"), not a line a layer: the bar is two lines tall
    assert len({lbl.mapTo(panel, lbl.rect().topLeft()).y() for lbl in panel.layer_labels}) == 1
    assert sw.bar.height() <= 3 * panel.scale_box.sizeHint().height()
    for name in ("P_before", "P_after"):
        w, h = _cells(panel, name)
        assert min(w, h) >= 250, (name, w, h)
    problems = [p for n in ("P_before", "P_after") for p in grid_problems(panel.grids[n], 1.0, 12.0, n)]
    assert not problems, problems
    assert panel.scroll.horizontalScrollBar().maximum() == 0
    assert not panel.maps_row.wrapped  # side by side: the width the column gave back


def test_switches_beside_the_figure_at_1920x1080(qtbot):
    """Control: a wide panel keeps its column of switches (and the maps their room)."""
    panel = _panel(qtbot, "coref", DOCK_1080)
    assert not panel._switches.narrow and panel.splitter.widget(0).isVisible() and not panel._switches.bar.isVisible()
    assert len({lbl.mapTo(panel, lbl.rect().topLeft()).y() for lbl in panel.layer_labels}) == 2  # a layer a line
    assert min(_cells(panel, "P_before")) >= 250


def test_a_switch_keeps_its_state_when_the_switches_move(qtbot):
    panel = _panel(qtbot, "coref", DOCK_1080)
    panel.head_checks[(1, 2)].setChecked(True)
    panel.resize(*DOCK_720)
    for _ in range(5):
        QApplication.processEvents()
    assert panel._switches.narrow and panel.head_checks[(1, 2)].isChecked()
    assert (1, 2) in panel.whatif().ablate


def test_export_lays_the_maps_out_at_the_page(qtbot, monkeypatch):
    """The on-screen floor of the maps is let go while exporting (a 1280×720 page at the slide's scale lays the
    figure out at 711 × 400: held at the floor, it overflowed and the page was cut), and comes back after."""
    import attnviz.gui.walkthrough.figure as figure

    panel = _panel(qtbot, "coref", DOCK_720)
    held = panel.maps_row.minimumHeight()
    assert held >= 250
    seen = []
    real = figure._settle

    def spy(widget):
        if widget is panel.figure_widget:
            seen.append(widget.height())
        real(widget)

    monkeypatch.setattr(figure, "_settle", spy)
    image = QImage(1280, 720, QImage.Format_ARGB32)
    painter = QPainter(image)
    panel.render_figure(painter, QRectF(0, 0, 1280, 720), 1.8)
    painter.end()
    assert seen and seen[0] <= 720 / 1.8 + 1, seen
    assert panel.maps_row.minimumHeight() == held
