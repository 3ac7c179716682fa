"""Pan and zoom over a T = 16,384 head map in the app's own head map view (Qt).

One causal head of random attention (float16, 0.5 GB) is built row block by row block and put in a
one-layer Trace, which a :class:`~attnviz.gui.views.head_map_view.HeadMapView` shows. Each frame
sets the view's range (as a mouse wheel or drag does); the view answers by drawing the crop of its
max-pooled level-of-detail pyramid that fits its pixels, and ``grab`` forces a full, synchronous
paint of the whole figure (axes, colour bar, title). Memory is the process's peak resident size.
The trace holds no additive mask (a float32 one would be 1 GB by itself): the zeros above the
diagonal are drawn as zeros, not hatched.
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


def _rss_gb() -> float:
    """Resident memory of this process now (Linux /proc), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 1e9
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def measure_long_map(T: int = 16384, n_frames: int = 60, size=(1000, 800)) -> dict:
    """Frame times (ms) and frames per second of the head map view over a zoom-and-pan path, and memory.

    Parameters
    ----------
    T : tokens (the map is T × T).
    n_frames : frames of the path (half zooming in from the whole map to 256 tokens, half panning).
    size : the view's size in pixels.
    """
    import os

    from attnviz.bench.screen import use_headless_screen

    use_headless_screen()
    from PySide6.QtWidgets import QApplication

    from attnviz.capture.description import TraceDescription
    from attnviz.capture.finish import finish_trace
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    app = QApplication.instance() or QApplication([])
    t0 = time.perf_counter()
    probs = _causal_attention(T)
    built_map = time.perf_counter() - t0
    description = TraceDescription(kind="decoder", n_layers=1, n_heads=1, n_kv_heads=1, scale=1.0, causal=True)
    trace = finish_trace([f"t{i}" for i in range(T)], {"L0.probs": probs[None]}, description)
    view = HeadMapView(selection=Selection())
    view.resize(*size)
    view.show()
    app.processEvents()
    t0 = time.perf_counter()
    view.set_trace(trace)  # builds the head's pyramid and draws the whole map
    view.grab()
    shown = time.perf_counter() - t0
    vb = view.heatmap.vb
    times, cpu, levels = [], [], set()
    for (r0, r1, c0, c1) in _frames(T, n_frames):
        start, c_start = time.perf_counter(), time.process_time()
        vb.setRange(xRange=(c0, c1), yRange=(r0, r1), padding=0)  # the view redraws its tile
        view.grab()  # a full synchronous paint of the frame
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - c_start) * 1000)
        levels.add(view.tile.level if view.tile is not None else 0)  # a map the screen holds: level 0
    rss = _rss_gb()
    pyramid_extra = view._pyramids.nbytes if view._pyramids is not None else 0
    view.close()
    view.deleteLater()
    app.processEvents()
    median = statistics.median(times)
    return {
        "T": T,
        "map GB (float16)": probs.nbytes / 1e9,
        "pyramid extra GB": pyramid_extra / 1e9,
        "RSS GB (after the frames)": rss,
        "peak RSS GB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9,  # Linux: KiB
        "build map s": built_map,
        "first view (pyramid + draw) s": shown,
        "levels drawn": " ".join(str(v) for v in sorted(levels)),
        "frame median ms": median,
        "frame CPU median ms": statistics.median(cpu),
        "frame p95 ms": sorted(times)[int(0.95 * (len(times) - 1))],
        "frames per second (median)": 1000.0 / median,
        "load average (1 min)": os.getloadavg()[0],
        "goal": ">= 30 fps, < 1 GB",
    }
