"""Layout audit of the live lesson in the app (issue 36, Deliver 4): Lesson ▸ Start in a window of a 1920×1080
and a 1280×720 screen, every scene of the bundled ``attention`` lesson as the window presents it (its page, its
style for that screen): titles, every token named, nothing under 12 px at either size (text drawn by the figure,
row and column labels, the lesson's title and caption; not the presenting floor in proportion, 8 px at 720
lines, which let 8–10 px row labels pass), no caption cut, the T×T maps square with row labels for the back row.

The offscreen screen is smaller than either size: the window is given the screen's size by hand after it goes
full screen, and the style the window composes for a screen of that many lines (``Pages._screen_lines``).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from layout_audit import (MIN_PX, PRESENT_PX, axis_title_overlaps, bar_overflow_problems,  # noqa: E402
                          cut_row_label_problems, painted_text_problems, presented_label_problems, row_label_problems, scroll_problems,
                          square_map_problems, stage_text_problems)
from test_layout_audit import SIZES, _audit_widget, _bundled  # noqa: E402

pytestmark = pytest.mark.slow

BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "models"


def _start_live_lesson(win, qtbot, w: int, h: int, monkeypatch):
    """Lesson ▸ Start in ``win`` on a ``w`` × ``h`` screen; the stage once its first figure is shown."""
    from attnviz.gui.window.pages import Pages
    from attnviz.gui.window.scene_actions import start_lesson

    monkeypatch.setattr(Pages, "_screen_lines", lambda self: h)  # the screen presented on
    stage = start_lesson(win, "attention")
    assert stage is not None
    qtbot.waitUntil(lambda: stage.view is not None and stage.index == 0 and win.isFullScreen(), timeout=120_000)
    win.setGeometry(0, 0, w, h)  # full screen on that screen
    qtbot.waitUntil(lambda: win.width() == w and win.height() == h and stage.width() >= 0.9 * w, timeout=10_000)
    return stage


def _show(stage, qtbot, i: int) -> None:
    if stage.index == i and stage.view is not None:
        return
    with qtbot.waitSignal(stage.scene_shown, timeout=120_000):
        stage.show_scene(i)
    stage._lane.cancel()  # the captions' claims are checked by the lesson tests, not here
    for _ in range(3):
        QApplication.processEvents()


def _lesson_problems(make_window, qtbot, size, monkeypatch) -> list[str]:
    from attnviz.gui.panels.presentation import leave_presentation

    w, h = size
    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))  # the lesson's models are the bundled ones
    stage = _start_live_lesson(win, qtbot, w, h, monkeypatch)
    problems = []
    try:
        assert stage.view.style.font_scale > 1, "the live lesson is not in the presentation style"
        for i, scene in enumerate(stage.lesson.scenes):
            _show(stage, qtbot, i)
            what = f"live lesson scene {i + 1} ({scene.view}) {w}×{h}"
            if stage.window() is not win or stage.width() < w * 0.9:
                problems.append(f"{what}: the stage is {stage.width()} px wide in a {win.width()} px window")
            problems += _audit_widget(stage.view, what, MIN_PX)  # 12 px at both sizes, not in proportion
            problems += row_label_problems(stage.view, MIN_PX, what)
            problems += stage_text_problems(stage, MIN_PX, what)
            problems += bar_overflow_problems(stage.view, what) + axis_title_overlaps(stage.view, what)
            # a scene is a page: nothing off screen until someone scrolls, no row label cut at its axis' end
            problems += scroll_problems(stage, what) + cut_row_label_problems(stage.view, what)
            problems += painted_text_problems(stage.view, MIN_PX, what)  # the grids' shapes, ticks, operators
            # the causal mask's maps too, side by side (S + M and P were ~180 px with ~9 px labels at 720)
            problems += presented_label_problems(stage.view, PRESENT_PX * h / 1080, what,
                                                 side_by_side=scene.view == "causal-mask")
            problems += square_map_problems(stage.view, PRESENT_PX * h / 1080, what)
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=10_000)
    return problems


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_scene_of_the_live_lesson_in_the_window(make_window, qtbot, size, monkeypatch):
    """The live lesson (not the exported deck, not a standalone stage): every scene legible at this size."""
    _bundled()
    # found in a helper: a failing assert here holds no window in its traceback (which would leak it)
    problems = _lesson_problems(make_window, qtbot, size, monkeypatch)
    assert not problems, "\n".join(problems)


def test_the_lesson_audit_sees_small_row_labels(qapp):
    """Negative control: a T×T map squeezed into a strip of the figure, its row labels too small for the back
    row, is reported."""
    import numpy as np

    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    from PySide6.QtWidgets import QWidget

    holder = QWidget()  # the audit looks for the grids inside a figure
    grid = MatrixGrid("P", parent=holder)
    toks = [f"t{i}" for i in range(24)]
    p = np.random.default_rng(0).dirichlet(np.ones(24), 24)
    grid.set_data(p, title="P", row_labels=toks, col_labels=toks, kind="prob", min_side=300)
    grid.resize(300, 160)  # a heatmap (no numbers), 24 rows in ~100 px
    holder.show()
    QApplication.processEvents()
    try:
        found = square_map_problems(holder, PRESENT_PX, "control")
        assert any("row labels are" in p for p in found), found
    finally:
        holder.close()
        holder.deleteLater()


def test_live_lesson_matrix_form_names_rows_at_12px_at_720(make_window, qtbot, monkeypatch):
    """The live lesson's "All queries at once" at 1280×720: every row label at least 12 px (MIN_PX, not the
    presenting floor in proportion), X/Q/K/V and the maps alike."""
    _bundled()
    # found in a helper: a failing assert here holds no window in its traceback (which would leak it)
    problems = _matrix_form_scene_problems(make_window, qtbot, monkeypatch)
    assert not problems, "\n".join(problems)


def _matrix_form_scene_problems(make_window, qtbot, monkeypatch) -> list[str]:
    from attnviz.gui.panels.presentation import leave_presentation

    win = make_window(model="tiny-encoder", text="the cat sat on the mat and it was happy")
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    stage = _start_live_lesson(win, qtbot, 1280, 720, monkeypatch)
    try:
        i = next(i for i, s in enumerate(stage.lesson.scenes) if s.view == "matrix-form")
        _show(stage, qtbot, i)
        return row_label_problems(stage.view, MIN_PX, "live lesson matrix form 1280×720")
    finally:
        leave_presentation(win)
        qtbot.waitUntil(lambda: win.tabs.indexOf(stage) < 0, timeout=10_000)


def test_matrix_form_label_audit_sees_small_strip_labels(qapp):
    """Negative control of row_label_problems: a 12-row strip squeezed to 100 px is reported, the same strip
    given room is not."""
    import numpy as np

    from PySide6.QtWidgets import QWidget

    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    holder = QWidget()
    grid = MatrixGrid("Q", parent=holder)
    toks = [f"t{i}" for i in range(12)]
    grid.set_data(np.random.default_rng(0).normal(size=(12, 16)), title="Q", row_labels=toks)
    holder.show()
    try:
        grid.resize(300, 100)
        QApplication.processEvents()
        assert row_label_problems(holder, MIN_PX, "control"), "a squeezed strip passed"
        grid.resize(300, 400)
        QApplication.processEvents()
        assert row_label_problems(holder, MIN_PX, "roomy") == []
    finally:
        holder.close()
        holder.deleteLater()


def matrix_form_label_problems(view, what: str) -> list[str]:
    """:func:`row_label_problems` at :data:`MIN_PX` (the name the matrix-form tests import)."""
    return row_label_problems(view, MIN_PX, what)


def _long_map(qapp, height: int):
    """A 128-row map (every 8th row named, as "Positions as waves") under a title, in a canvas ``height`` tall."""
    import numpy as np
    import pyqtgraph as pg

    from attnviz.gui.views.heatmap_data import quantize
    from attnviz.gui.widgets.heatmap import LabelledHeatmap

    canvas = pg.GraphicsLayoutWidget()
    m = LabelledHeatmap()
    canvas.addItem(m)
    values = np.random.default_rng(0).uniform(-1, 1, (128, 64))
    m.set_image(quantize(values, 1.0, vmin=-1.0), values.shape)
    m.set_labels([f"{i} t" for i in range(128)], [str(d) for d in range(64)])
    m.left.set_major(range(0, 128, 8))
    m.set_title("a title right above the first row")
    canvas.resize(900, height)
    canvas.show()
    for _ in range(4):
        QApplication.processEvents()
    canvas.grab()  # the axes draw their label strips
    return canvas, m


def test_row_labels_stay_inside_their_axis(qapp, monkeypatch):
    """The first row's label of a long map is drawn inside its axis, not half under the title (scene 13 at
    1280×720); control: with the labels at their rows' centres (the old drawing) the audit reports the cut."""
    from types import SimpleNamespace

    from attnviz.gui.widgets.token_label_images import LabelImages

    canvas, m = _long_map(qapp, 480)
    try:
        assert cut_row_label_problems(SimpleNamespace(canvas=canvas), "fixed") == []
        monkeypatch.setattr(LabelImages, "_text_positions", lambda self, idx, pos, r, fm: (idx, pos))
        m.left._strip = None
        m.left.update()
        canvas.grab()
        assert cut_row_label_problems(SimpleNamespace(canvas=canvas), "control"), "the cut label was not seen"
    finally:
        canvas.close()
        canvas.deleteLater()


def test_painted_text_audit_sees_small_grid_text(qapp):
    """Negative control of painted_text_problems: a grid drawn in a small style is reported, the same grid in the
    presenting style is not."""
    from dataclasses import replace

    import numpy as np

    from attnviz.gui.style import ViewStyle
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    toks = [f"t{i}" for i in range(6)]
    for scale, small in ((0.6, True), (2.0, False)):
        grid = MatrixGrid("Q", style=replace(ViewStyle(), font_scale=scale))
        grid.set_data(np.random.default_rng(0).normal(size=(6, 4)), title="Q", row_labels=toks)
        grid.resize(500, 400)
        grid.show()
        QApplication.processEvents()
        try:
            found = painted_text_problems(grid, MIN_PX, "control")
            assert bool(found) == small, (scale, found)
        finally:
            grid.close()
            grid.deleteLater()
