"""Every row of the exported causal mask is named (issue 36): `attnviz export --model induction --view
causal-mask` drew 21 row labels beside M and P but 20 beside "Scaled scores S + M": its first row's label stood
0.5 px over the axis' top, was moved inside, and the move dropped its neighbour "1 b" although the labels were
packed no closer than the axis' own layout packs them."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402


@pytest.fixture(scope="module")
def drawn_rows(tmp_path_factory):
    """{left axis: the row indices it drew} for the induction model's causal-mask export."""
    from attnviz.export.batch import export_one
    from attnviz.export.headless import ensure_app
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.gui.widgets.token_label_images import LabelImages
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    ensure_app()
    trace = run_trace(load_model("induction", device="cpu"), text="blackhorseblackhorse")
    drawn, original = {}, LabelImages._text_positions

    def recording(self, idx, positions, r, fm):
        out = original(self, idx, positions, r, fm)
        if self.orientation == "left":
            drawn[id(self)] = (len(self.labels), sorted(out[0].tolist()))
        return out

    LabelImages._text_positions = recording
    try:
        export_one("causal-mask", trace, SelectionState(layer=1, head=0), tmp_path_factory.mktemp("mask") / "m.png",
                   ExportOptions(), export_style())
    finally:
        LabelImages._text_positions = original
    return list(drawn.values())


def test_every_map_of_the_mask_names_all_its_rows(drawn_rows):
    assert len(drawn_rows) == 2, drawn_rows  # S + M and P (M folded: its "−∞" under the slide's floor, issue 36)
    for n, rows in drawn_rows:
        assert n == 21 and rows == list(range(n)), (n, rows)


class _Metrics:
    def __init__(self, h: float):
        self.h = h

    def height(self) -> float:
        return self.h


def _positions(first: float, pitch: float, n: int = 21):
    from attnviz.gui.widgets.token_axis import TokenAxisItem

    axis = TokenAxisItem("left")
    idx = np.arange(n)
    return axis._text_positions(idx, first + pitch * idx, QRectF(0, 0, 40, first + pitch * n), _Metrics(10.45))


def test_a_first_label_a_hair_over_the_edge_keeps_its_neighbour():
    idx, _ = _positions(first=4.72, pitch=9.44)  # the measured S + M axis
    assert idx.tolist() == list(range(21))


def test_a_label_moved_onto_its_neighbour_still_drops_it():
    """Control: every third row of 3.7 px rows, the first label moved 3 px down onto the next one drawn: that
    one gives way, as before (the lesson's "Positions as waves")."""
    idx, pos = _positions(first=1.85, pitch=11.1)
    assert 1 not in idx.tolist() and pos[0] > 1.85, (idx, pos)
