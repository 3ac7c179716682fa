"""Issue 36: presented (F5, the live lesson's "All queries at once"), the matrix form's X, Q, K, V name their 12
rows at the presented size in proportion to the screen (20 px at 1080 lines, 13.3 at 720), not at the docked
12 px under T×T maps labelled in 28 px; the T×T maps keep at least that size too."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from walkthrough_fixtures import make_trace, matrix_form_shown, model_dir  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402

PRESENT_PX = 20.0  # tests/gui/layout_audit.py's presented size on a 1080-line screen


def _px(font) -> float:
    return font.pointSizeF() * 96 / 72


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return make_trace(model_dir(tmp_path_factory.mktemp("m") / "enc", kind="encoder"))  # 12 tokens with [CLS]


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_presented_supporting_grids_name_rows_at_the_presented_size(qtbot, trace, size):
    w = matrix_form_shown(qtbot, trace, size, section="head", style=PRESETS["presentation"].with_(font_scale=2.1))
    want = PRESENT_PX * size[1] / 1080
    assert w.grids["X"].values.shape[0] == 12
    for name in ("X", "Q", "K", "V", "QK", "P"):
        g = w.grids[name]
        assert _px(g.row_label_font()) >= want - 0.05 and g.row_label_stride() == 1, (name, _px(g.row_label_font()))


def test_docked_supporting_grids_keep_the_docked_floor(qtbot, trace):
    """Control: docked (not presenting) the X, Q, K, V rows are not asked the presented size, only the docked
    floor's 12 px of ink (legible.ink_pt: 9 pt of type inks 10 px)."""
    from attnviz.gui.widgets.legible import DOCKED_FLOOR_PT, ink_pt

    w = matrix_form_shown(qtbot, trace, (1500, 820), section="head")
    g = w.grids["X"]
    assert not g.compact and g.row_floor_pt() == pytest.approx(ink_pt(g._fonts()[2], DOCKED_FLOOR_PT))
