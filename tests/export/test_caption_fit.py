"""A slide's caption band (issue 34 Deliver 6: the T² scene's measured caption is two lines): a caption that
does not fit on one line at the band's size shrinks until its wrapped lines fit inside the band, instead of
being drawn across the figure above and off the page below."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QWidget
from PySide6.QtGui import QFont

from attnviz.figures import page_bands, render
from attnviz.figures.render import ExportOptions, render_image

LONG = ("Measured on this machine (x86_64, 2 cores, torch 2.13.0+cpu (2 threads), CPU), one layer of charlm's shape "
        "(4 heads × 16, float32): eager memory (T×T scores) grows as T^2.00 (344 MB at T = 2,048), tiled SDPA "
        "memory as T^1.00 (0.6 MB); fastest call 913 ms vs 56 ms.")


@pytest.fixture
def blank(qtbot):
    w = QWidget()
    w.setStyleSheet("background: white")
    w.resize(1000, 600)
    qtbot.addWidget(w)
    return w


def _ink_rows(blank, caption: str) -> tuple[np.ndarray, int]:
    """Rows of a 1920×1080 slide holding dark pixels, and the caption band's top row."""
    opts = ExportOptions(width=1920, height=1080, caption=caption)
    img = render_image(blank, opts).convertToFormat(render.QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())[:, :img.width() * 4]
    dark = (a.reshape(img.height(), img.width(), 4)[..., :3].min(axis=2) < 128).any(axis=1)
    return np.flatnonzero(dark), 1080 - round(1080 * 0.05)


def test_a_long_caption_fits_its_band(blank):
    rows, top = _ink_rows(blank, LONG)
    assert rows.size and rows.min() > top and rows.max() < 1079  # inside the band, not cut at the page's edge


def test_without_shrinking_the_caption_overflows(blank, monkeypatch):
    monkeypatch.setattr(page_bands, "CAPTION_MIN_PX", 10_000)  # control: the band's one-line size, as before
    rows, top = _ink_rows(blank, LONG)
    assert rows.min() <= top or rows.max() >= 1079


def test_a_short_caption_keeps_the_bands_size(blank):
    opts = ExportOptions(width=1920, height=1080, caption="short")
    _, font = page_bands.caption_layout(opts, QFont())
    assert font.pixelSize() == int(round(1080 * 0.05) * 0.55)


def test_a_long_caption_keeps_a_margin_at_each_side(blank):
    """Issue 36: the deck's two-line captions ran from one edge of the page to the other (page 10 from x = 12 px)."""
    opts = ExportOptions(width=1920, height=1080, caption=LONG)
    img = render_image(blank, opts).convertToFormat(render.QImage.Format.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())[:, :img.width() * 4]
    band = a.reshape(img.height(), img.width(), 4)[1080 - round(1080 * 0.05):, :, :3]
    cols = np.flatnonzero((band.min(axis=2) < 128).any(axis=0))
    assert cols.size > 1000  # control: the caption is there, wrapped over most of the width
    assert cols.min() >= 0.02 * 1920 - 1 and cols.max() <= 0.98 * 1920 + 1, (cols.min(), cols.max())
