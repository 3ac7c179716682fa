"""What if on a slide and in a 1280×720 dock (issue 36, items 7, 12, 13).

Presented (F5) on a 1280×720 projector the two attention maps were drawn ~190 px (the tables' row above them took
the height) and the notes scrolled off the slide; the switches were hidden. Now the tables stand beside the maps,
the maps get ≥ 260 px with ≥ 12 px labels, the switches stay in a bar above the figure and nothing scrolls.
Docked at 1280×720, translate's compared row ("→ vidas") sat under the viewport's edge: it is scrolled into view.
The map titles name the head and the attention they show (translate's decoder self-attention, not its cross-).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from whatif_fixtures import whatif_panel  # noqa: E402

SLIDE_720 = (1276, 712)  # the What-if tab presented full screen on a 1280×720 projector (tab bar hidden)
DOCK_720 = (980, 470)  # the Walkthrough tab's area in a 1280×720 window (test_whatif_map_room)


def _panel(qtbot, model: str, size, presented: bool = False):
    from attnviz.gui.panels.appearance import compose_style

    panel = whatif_panel(qtbot, model, size, compose_style("light", presented, "viridis", 720))
    if presented:
        panel.set_controls_visible(False)  # what F5 does (presentation.PresentationMode._present)
        for _ in range(10):
            QApplication.processEvents()
    return panel


def _label_px(grid) -> float:
    return grid.row_label_font().pointSizeF() * grid.logicalDpiY() / 72


@pytest.mark.parametrize("model", ["coref", "translate"])
def test_presented_at_1280x720_the_maps_are_large_and_everything_stays_on_the_slide(qtbot, model):
    from layout_audit import grid_problems

    panel = _panel(qtbot, model, SLIDE_720, presented=True)
    for name in ("P_before", "P_after"):
        grid = panel.grids[name]
        area, _, _ = grid._cells()
        assert min(area.width(), area.height()) >= 260, (name, area)
        assert _label_px(grid) >= 12, name
        assert grid.row_label_stride() == 1 and grid.col_label_stride() == 1  # every token named
    problems = [p for n in ("P_before", "P_after") for p in grid_problems(panel.grids[n], 1.0, 12.0, n)]
    assert not problems, problems
    # the switches stay on the slide, every group whole inside their bar
    sw = panel._switches
    assert sw.bar.isVisible() and not panel.splitter.widget(0).isVisible()
    for g in sw.groups[:-1]:  # (the last is the state line, empty while nothing runs)
        assert g.isVisible() and g.geometry().right() <= sw.bar.width(), g
    # nothing cut or scrolled: not sideways, not off the bottom (the notes are under the maps)
    assert panel.scroll.horizontalScrollBar().maximum() == 0
    assert panel.scroll.verticalScrollBar().maximum() == 0
    note = panel.board.items[-1]
    bottom = note.mapTo(panel.scroll.viewport(), QPoint(0, note.height())).y()
    assert "mean attention entropy" in note.text() and bottom <= panel.scroll.viewport().height()
    # the tables stand beside the maps, every number shown
    maps_right = panel.grids["P_after"].mapTo(panel.board, QPoint(panel.grids["P_after"].width(), 0)).x()
    for name in ("top_before", "top_after", "H_before", "H_after"):
        table = panel.grids[name]
        assert table.mapTo(panel.board, QPoint(0, 0)).x() >= maps_right and table.numbers_shown, name


def test_leaving_the_slide_puts_the_switches_back_beside_the_figure(qtbot):
    """Control: docked again at 1920×1080, the switches are in their column and the tables above the maps."""
    panel = _panel(qtbot, "coref", (1500, 820), presented=True)
    assert panel._switches.bar.isVisible()
    from attnviz.gui.panels.appearance import compose_style

    panel.set_controls_visible(True)
    panel.set_style(compose_style("light", False, "viridis", 1080))
    for _ in range(10):
        QApplication.processEvents()
    assert not panel._switches.bar.isVisible() and panel.splitter.widget(0).isVisible()
    assert panel.first_row is not None and len(panel.grids["top_before"].values) == 5  # top 5 docked, 3 on a slide


def test_map_titles_name_the_head_and_the_attention(qtbot):
    tr = _panel(qtbot, "translate", DOCK_720)
    s = tr.state
    for name in ("P_before", "P_after"):
        grid = tr.grids[name]
        assert f"L{s.layer} h{s.head}" in grid.title, grid.title
        assert grid.subtitle.startswith("decoder self-attention"), grid.subtitle  # not the cross-attention
    coref = _panel(qtbot, "coref", DOCK_720)
    assert coref.grids["P_before"].subtitle.startswith("self-attention")  # one stack: no "decoder"


def test_docked_at_1280x720_the_compared_row_is_scrolled_into_view(qtbot):
    panel = _panel(qtbot, "translate", DOCK_720)
    grid = panel.grids["P_before"]
    (row,) = grid.highlight_rows
    viewport = panel.scroll.viewport()
    assert panel.scroll.verticalScrollBar().maximum() > 0  # the figure is taller than the dock

    def row_on_screen() -> bool:
        area, _, ch = grid._cells()
        top = grid.mapTo(viewport, QPoint(0, int(area.top() + row * ch))).y()
        return 0 <= top and top + ch <= viewport.height()

    qtbot.waitUntil(row_on_screen, timeout=5_000)


def test_the_two_maps_are_drawn_alike_when_one_title_is_longer(qtbot):
    """'switched off (z = 0) · L1 h0' stacked its subtitle where 'as trained · L1 h0' did not: the maps share their
    rows, so one was drawn 15 px shorter and the other's cells out of square (translate, 1920×1080 dock)."""
    panel = _panel(qtbot, "translate", (1250, 820))  # the figure ~880 px wide beside the switches, as in the app
    panel.head_checks[(1, 0)].setChecked(True)
    panel.rerun()
    for _ in range(10):
        QApplication.processEvents()
    assert "switched off" in panel.grids["P_after"].title and not panel._switches.narrow
    cells = [panel.grids[n]._cells() for n in ("P_before", "P_after")]
    for area, cw, ch in cells:
        assert abs(cw - ch) < 0.5, (cw, ch)  # square
    assert abs(cells[0][0].height() - cells[1][0].height()) < 0.5  # alike
    assert abs(cells[0][0].top() - cells[1][0].top()) < 0.5


def test_a_wide_export_gets_the_slide_arrangement_and_the_dock_gets_its_own_back(qtbot, monkeypatch):
    """A 1280×720 page (laid out at 1067 × 600) drew the docked arrangement: the maps ~170 layout px under the
    row of tables. It now gets the slide's (tables beside the maps, maps ≥ 220 layout px), painted whole."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    import attnviz.gui.walkthrough.figure as figure

    panel = _panel(qtbot, "translate", DOCK_720)
    seen = []
    real = figure._settle

    def spy(widget):
        real(widget)
        if widget is panel.figure_widget:
            grid = panel.grids["P_before"]
            seen.append((panel.first_row, grid.isVisibleTo(panel.figure_widget), grid._cells()[0].width()))

    monkeypatch.setattr(figure, "_settle", spy)
    image = QImage(1280, 720, QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    panel.render_figure(painter, QRectF(0, 0, 1280, 720), 1.2)
    painter.end()
    first_row, shown, side = seen[0]
    assert first_row is None and shown and side >= 220, seen[0]
    # painted, not a blank page: the redrawn grids are shown before the page is painted
    white = QColor("white")
    inked = sum(image.pixelColor(x, y) != white for x in range(0, 1280, 16) for y in range(0, 720, 16))
    assert inked > 0.1 * (1280 // 16) * (720 // 16), inked
    # the dock has its own arrangement back, with the maps' floor
    monkeypatch.undo()
    for _ in range(5):
        QApplication.processEvents()
    assert panel.first_row is not None and panel.maps_row.minimumHeight() >= 250


def test_presented_with_a_head_switched_off_the_notes_are_one_paragraph(qtbot):
    """Three notes (what ablating does, both decoders read one output, the mean entropy), each starting its own
    line, took the maps down to 237 px on a 1280×720 slide; as one paragraph the maps keep ≥ 260 px."""
    panel = _panel(qtbot, "translate", SLIDE_720, presented=True)
    panel.head_checks[(1, 0)].setChecked(True)
    panel.rerun()
    for _ in range(10):
        QApplication.processEvents()
    note = panel.board.items[-1].text()
    assert "switched off" in note and "Both decoders" in note and "mean attention entropy" in note
    for name in ("P_before", "P_after"):
        area, _, _ = panel.grids[name]._cells()
        assert min(area.width(), area.height()) >= 260, (name, area)
    assert panel.scroll.verticalScrollBar().maximum() == 0


def test_docked_the_notes_stay_apart(qtbot):
    """Control: docked (the figure scrolls), each note keeps its own line."""
    panel = _panel(qtbot, "translate", DOCK_720)
    texts = [w.text() for w in panel.board.items if hasattr(w, "text")]
    assert any(t.startswith("Both decoders") for t in texts) and any(t.startswith("mean attention") for t in texts)
