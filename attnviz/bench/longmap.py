"""Pan and zoom over a T = 16,384 head map drawn from a max-pooled level-of-detail pyramid (Qt).

One causal head of random attention (float16, 0.5 GB) is built row block by row block; the pyramid
adds a third of that. Each frame asks the pyramid for the viewport, quantises and colours the crop
and hands it to a pyqtgraph ImageItem placed on the data's coordinates, then paints the widget
(``grab`` forces a full, synchronous paint). The frame path is the one the head map takes.
"""

from __future__ import annotations

import resource
import statistics
import time

import numpy as np

__all__ = ["measure_long_map"]


def _causal_attention(T: int, seed: int = 0, block: int = 1024) -> np.ndarray:
    """(T, T) float16 rows that sum to 1 over keys ≤ query, built without a float64 copy of the whole map."""
    rng = np.random.default_rng(seed)
    out = np.zeros((T, T), np.float16)
    for r0 in range(0, T, block):
        rows = rng.random((min(block, T - r0), T), dtype=np.float32)
        q = np.arange(r0, r0 + rows.shape[0])[:, None]
        rows[np.arange(T)[None, :] > q] = 0.0
        rows[np.arange(rows.shape[0]), q[:, 0]] += 2.0  # a visible diagonal, as on a real causal map
        rows /= rows.sum(axis=1, keepdims=True)
        out[r0:r0 + rows.shape[0]] = rows
    return out


def _frames(T: int, n: int) -> list[tuple[float, float, float, float]]:
    """A lecture-like path: zoom from the whole map to a 256-token window, then pan along the diagonal."""
    path = []
    half = n // 2
    for i in range(half):
        span = T * (256 / T) ** (i / max(half - 1, 1))
        c = T / 2
        path.append((c - span / 2, c + span / 2, c - span / 2, c + span / 2))
    for i in range(n - half):
        c = 128 + (T - 256) * i / max(n - half - 1, 1)
        path.append((c - 128, c + 128, c - 128, c + 128))
    return path


def measure_long_map(T: int = 16384, n_frames: int = 60, size=(1000, 800)) -> dict:
    """Frame times (ms) and frames per second over a zoom-and-pan path, and the memory held."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QApplication

    from attnviz.analysis.pyramid import MaxPyramid
    from attnviz.gui.style import ViewStyle, colour_lut
    from attnviz.gui.views.heatmap_data import colourize, quantize

    app = QApplication.instance() or QApplication([])
    t0 = time.perf_counter()
    probs = _causal_attention(T)
    built_map = time.perf_counter() - t0
    t0 = time.perf_counter()
    pyramid = MaxPyramid(probs)
    built_pyramid = time.perf_counter() - t0
    vmax = float(pyramid.levels[-1].max())
    lut = colour_lut(ViewStyle())

    widget = pg.PlotWidget()
    widget.resize(*size)
    widget.getPlotItem().invertY(True)
    item = pg.ImageItem(axisOrder="row-major")
    widget.addItem(item)
    widget.show()
    app.processEvents()
    px_w, px_h = size
    times = []
    for (r0, r1, c0, c1) in _frames(T, n_frames):
        start = time.perf_counter()
        v = pyramid.view(r0, r1, c0, c1, px_h, px_w)
        rgba = colourize(quantize(v.image.astype(np.float32), vmax), lut)
        item.setImage(rgba, autoLevels=False)
        item.setRect(QRectF(v.col0, v.row0, v.col1 - v.col0, v.row1 - v.row0))
        widget.setRange(xRange=(c0, c1), yRange=(r0, r1), padding=0)
        widget.grab()  # a full synchronous paint of the frame
        times.append((time.perf_counter() - start) * 1000)
    widget.close()
    median = statistics.median(times)
    return {
        "T": T,
        "map GB (float16)": probs.nbytes / 1e9,
        "pyramid extra GB": pyramid.nbytes_extra / 1e9,
        "peak RSS GB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
        "build map s": built_map,
        "build pyramid s": built_pyramid,
        "frame median ms": median,
        "frame p95 ms": sorted(times)[int(0.95 * (len(times) - 1))],
        "frames per second (median)": 1000.0 / median,
        "goal": ">= 30 fps, < 1 GB",
    }
