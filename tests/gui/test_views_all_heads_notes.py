"""All heads at a real model's shape (30 layers × 9 heads) in a narrow dock: the notes under neighbouring tiles never
run together. The page was planned without the figure's own margins (9 px a side), two columns for 18 px less than
they needed, and at 1280×720 the notes read "2.67 · 8.72.67 · 9.2"."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.views import ModelView  # noqa: E402
from attnviz.gui.views.all_heads_pages import PITCH_X  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return sample_trace("decoder", T=37, n_layers=30, n_heads=9, d_model=18)


def _gap(view) -> tuple[int, float]:
    """(columns on the page, px between the widest note and its neighbour's: negative when they touch)."""
    (x0, x1), _ = view.vb.viewRange()
    pitch = PITCH_X * view.vb.width() / (x1 - x0)
    widest = max(QFontMetricsF(view.notes.font).horizontalAdvance(t) for t in set(view.notes.all_texts()))
    return view.page_shape()[1], pitch - widest


def _shown(qtbot, trace, width):
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(width, 800)
    view.show()
    view.set_trace(trace)
    qtbot.waitUntil(lambda: bool(view.notes.all_texts()) and "…" not in set(view.notes.all_texts()), timeout=30_000)
    for _ in range(10):
        QApplication.processEvents()
    return view


@pytest.mark.parametrize("width", [300, 310, 320, 330, 345, 360])
def test_neighbouring_notes_keep_apart_in_a_narrow_dock(qtbot, trace, width):
    cols, gap = _gap(_shown(qtbot, trace, width))
    assert cols == 1 or gap >= 4.0, (width, cols, gap)


def test_a_wide_dock_still_shows_several_heads_a_page(qtbot, trace):
    """Control: the margins are taken once, not so often that a wide dock pages one head at a time."""
    cols, gap = _gap(_shown(qtbot, trace, 760))
    assert cols >= 4 and gap >= 4.0, (cols, gap)
