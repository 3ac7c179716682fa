"""The lesson deck's "All queries at once" page as it prints: the PDF rasterised (Ghostscript: PySide6-Essentials has no
QtPdf) and measured in pixels. Q Kᵀ, scaled and P are three maps of one shape drawn to scale: the highlighted query
row's frame (#EE7733) is as wide in each, and P's cells (viridis) cover a square — the live lesson once drew these
maps as 2.5 : 1 strips. A drawn 2.5 : 1 strip is the control: the same measurement calls it squashed."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

ORANGE = np.array([0xEE, 0x77, 0x33])  # the highlighted query row's frame (matrix_grid_paint)
MAX_ASPECT = 1.25  # a tokens × tokens map read as a square (tests/gui/layout_audit.MAX_MAP_ASPECT)


def _gs() -> str:
    gs = shutil.which("gs")
    if gs is None:
        if os.environ.get("CI"):
            pytest.fail("Ghostscript (gs) is needed to rasterise the deck: .ci/run installs it")
        pytest.skip("no Ghostscript (gs) to rasterise the PDF here")
    return gs


def _raster(pdf, page: int, out) -> np.ndarray:
    """Page ``page`` (1-based) of ``pdf`` as an RGB array at 144 dpi."""
    subprocess.run([_gs(), "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=png16m", "-r144",
                    f"-dFirstPage={page}", f"-dLastPage={page}", f"-sOutputFile={out}", str(pdf)],
                   check=True, timeout=120)
    return np.asarray(Image.open(out).convert("RGB")).astype(int)


def _runs(mask_row: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """(start, length) of the runs of True at least ``min_len`` long."""
    padded = np.concatenate([[False], mask_row, [False]])
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(a, b - a) for a, b in zip(edges[::2], edges[1::2]) if b - a >= min_len]


def map_problems(rgb: np.ndarray) -> list[str]:
    """The lower half of a matrix-form page: three query frames of equal width, P's cells a square that fills its
    frame's width. Returns the problems in words (empty: drawn to scale)."""
    h, w, _ = rgb.shape
    low = rgb[h // 2:]
    orange = (np.abs(low - ORANGE).sum(axis=2) < 60)
    frames: dict[int, int] = {}  # left edge → width of the longest orange run starting there (±3 px)
    for y in range(orange.shape[0]):
        for x, n in _runs(orange[y], w // 20):
            key = next((k for k in frames if abs(k - x) <= 3), x)
            frames[key] = max(frames.get(key, 0), n)
    out = []
    if len(frames) != 3:
        return [f"{len(frames)} query frames in the lower half, not 3 (Q Kᵀ, scaled, P): {sorted(frames.items())}"]
    widths = [frames[k] for k in sorted(frames)]
    if max(widths) > 1.03 * min(widths):
        out.append(f"the three maps are {widths} px wide, not equal")
    # P's cells: viridis from dark purple (#440154) up; the frame's orange and the text are not
    r, g, b = low[..., 0], low[..., 1], low[..., 2]
    viridis = (b >= r + 10) & (b > g + 30) & (r < 110) & (np.arange(w)[None, :] >= sorted(frames)[-1] - 3)
    ys, xs = np.nonzero(viridis)
    if not len(ys):
        return out + ["no P cells found"]
    pw, ph = xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
    if max(pw, ph) > MAX_ASPECT * min(pw, ph):
        out.append(f"P is drawn {pw} × {ph} px ({pw / ph:.2f} : 1), not square")
    if abs(pw - widths[-1]) > 0.05 * widths[-1]:
        out.append(f"P's cells are {pw} px wide in a frame of {widths[-1]} px")
    return out


@pytest.fixture(scope="module")
def matrix_page(tmp_path_factory):
    """The built-in lesson's matrix-form page alone, exported as the deck writes it."""
    from attnviz.figures.scenes import export_lesson_pdf
    from attnviz.lessons.lesson import load_lesson

    lesson = load_lesson("attention")
    scenes = [s for s in lesson.scenes if s.view == "matrix-form"]
    assert len(scenes) == 1 and scenes[0].title.startswith("All queries at once")
    tmp = tmp_path_factory.mktemp("deck")
    export_lesson_pdf(replace(lesson, scenes=scenes), tmp / "deck.pdf")
    return _raster(tmp / "deck.pdf", 1, tmp / "p.png")


def test_deck_matrix_page_draws_its_maps_to_scale(qapp, matrix_page):
    assert not map_problems(matrix_page)


def test_a_squashed_strip_is_caught(qapp, tmp_path):
    """Control: a PDF page with three 12 × 12 maps drawn 2.5 : 1 (as the live lesson once did), same frames."""
    from PySide6.QtCore import QMarginsF, QRectF, QSizeF
    from PySide6.QtGui import QColor, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen

    writer = QPdfWriter(str(tmp_path / "squashed.pdf"))
    writer.setResolution(96)
    writer.setPageLayout(QPageLayout(QPageSize(QSizeF(960, 540), QPageSize.Point), QPageLayout.Portrait,
                                     QMarginsF(0, 0, 0, 0)))
    p = QPainter(writer)
    for i, colour in enumerate(("#f4d6c8", "#f4d6c8", "#440154")):
        cells = QRectF(40 + i * 420, 400, 320, 128)  # 2.5 : 1
        p.fillRect(cells, QColor(colour))
        p.setPen(QPen(QColor("#EE7733"), 3))
        p.drawRect(QRectF(cells.left(), cells.top() + 60, cells.width(), 10))
    p.end()
    problems = map_problems(_raster(tmp_path / "squashed.pdf", 1, tmp_path / "s.png"))
    assert any("not square" in x for x in problems), problems
