"""A short input's token strip (rollout on text) grows to fill a wide figure, never past MAX_ZOOM."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402

from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.widgets.value_token_row import MAX_ZOOM, TokenStripItem  # noqa: E402


def _strip(width: float, tokens) -> TokenStripItem:
    strip = TokenStripItem(PRESETS["presentation"], "rollout")
    layout = pg.GraphicsLayout()
    layout.addItem(strip)
    strip.holder = layout  # keep the parent alive with the strip
    strip.resize(width, 40)
    strip.set_values(tokens, np.linspace(0, 1, len(tokens)), np.arange(len(tokens), dtype=np.uint8))
    return strip


def test_short_strip_fills_a_wide_figure_and_stays_on_one_row(qapp):
    tokens = ["[CLS]", "the", "animal", "was", "tired"]
    wide, narrow = _strip(1500, tokens), _strip(420, tokens)
    assert 1.0 < wide.zoom <= MAX_ZOOM and narrow.zoom == 1.0
    tops = {round(b.top()) for b in wide._boxes}
    assert len(tops) == 1 and wide._boxes[-1].right() <= 1500  # one row, inside the figure
    assert wide._boxes[0].height() > narrow._boxes[0].height()  # larger type, taller boxes
    many = _strip(1500, [f"tok{i}" for i in range(60)])  # a long input wraps at the normal size
    assert many.zoom == 1.0 and len({round(b.top()) for b in many._boxes}) > 1
