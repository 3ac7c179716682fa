"""The walkthrough's row labels ink at least 12 px on screen (issue 36 at 1280×720: the matrix form of a 30 × 9
model named its 24 rows and shapes' six steps its 17 keys in a 12-px (9-pt) font whose letters ink 10 px: the
floor counted the type size, not the ink). Measured as the tallest letters' ink (b, d, A, 0) of the font each
grid draws its row labels in, as a crop of the screen counts rows of dark pixels."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFont, QFontMetricsF  # noqa: E402

from walkthrough_fixtures import matrix_form_shown, show_widget  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402

MIN_INK_PX = 12.0
DOCK_SIZES = [(1500, 820), (980, 470)]  # the Walkthrough dock's figure area at 1920×1080 and 1280×720


def ink_px(font: QFont) -> float:
    return QFontMetricsF(font).tightBoundingRect("bdhkABD0").height()


def _thin_rows(widget, what: str) -> list[str]:
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    out = []
    for g in widget.findChildren(MatrixGrid):
        # not the T×T maps (they name their columns too): their rows are as tall as their columns are wide, and
        # stay at the 12-px type floor for now (24 columns inked 12 px would wrap a 1920×1080 dock's maps)
        if (g.isVisibleTo(g.window()) and g.values.size and g.row_labels and not g.col_labels
                and 1 < g.values.shape[0] <= 24):
            ink = ink_px(g.row_label_font())
            if ink < MIN_INK_PX:
                out.append(f"{what}: {g.title} names its {g.values.shape[0]} rows in letters {ink:.0f} px tall")
    return out


def test_the_measure_sees_a_9pt_label(qapp):
    """Control: the app's 9-pt (12-px) label font inks under 12 px, which the measure reports."""
    from attnviz.gui.style import ViewStyle

    assert ink_px(ViewStyle().font()) < MIN_INK_PX


@pytest.mark.parametrize("size", DOCK_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_matrix_form_rows_ink_12_px(qtbot, size):
    w = matrix_form_shown(qtbot, sample_trace("decoder", T=48, n_heads=2, d_model=16), size, query=30, section="head")
    assert w.form.windowed and w.grids["K"].values.shape[0] == 24  # 24 named rows, as a 30 × 9 model's page
    assert not _thin_rows(w, f"matrix form {size}")


@pytest.mark.parametrize("size", DOCK_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_six_steps_key_rows_ink_12_px(qtbot, size):
    from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget

    w = show_widget(qtbot, WalkthroughWidget(), size)
    w.set_trace(sample_trace("vit", n_layers=2))  # [CLS] and 16 patches: 17 keys, as shapes
    assert w.step_name == "project" and w.grids["k"].values.shape[0] == 17
    qtbot.waitUntil(lambda: w.grids["k"].isVisibleTo(w), timeout=30_000)  # the step's grids are shown
    assert not _thin_rows(w, f"six steps {size}")
