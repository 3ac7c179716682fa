"""The matrix form's "the block" part names R_mid and R_out as the lecture does ("R_mid = R + A", "R_out → layer
18": the next layer's R), never by the trace's keys: a class read "R_mid (L17.h)" and "R_out (L17.resid)" (issue 36)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from walkthrough_fixtures import matrix_form_shown  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.widgets.formula_text import has_subscripts  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return sample_trace("decoder", T=6, n_heads=2, d_model=16, n_layers=2)


def _block_titles(qtbot, trace, layer: int) -> dict[str, str]:
    w = matrix_form_shown(qtbot, trace, (1500, 820))
    w.set_section("block")
    if layer != 0:
        w.selection.update(layer=layer)
    qtbot.waitUntil(lambda: "resid" in w.grids and w._form_key is not None and w._form_key[2] == layer,
                    timeout=30_000)
    return {name: g.title for name, g in w.grids.items()}


@pytest.mark.parametrize("layer", [0, 1])
def test_block_matrices_are_named_for_a_lecturer(qtbot, trace, layer):
    titles = _block_titles(qtbot, trace, layer)
    shown = " ".join(titles.values())
    # the trace's keys (L0.h, L0.resid) are not shown; negative control: the grids do carry titles
    assert ".resid" not in shown and f"L{layer}." not in shown, titles
    assert titles["h"].startswith("R_mid = ") and "R + A" in titles["h"], titles
    last = "R_out → layer 1" if layer == 0 else "R_out (last layer)"  # where it goes: the next layer's R
    assert titles["resid"] == last, titles
    # drawn with real subscripts (the grid's title paint turns "R_mid" into R with "mid" below)
    assert has_subscripts(titles["h"]) and has_subscripts(titles["resid"])
