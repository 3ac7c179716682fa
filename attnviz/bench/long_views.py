"""The head map of a 16,384-token input asked for in blocks: tile latency, pan frame rate, overview fill time.

The trace is :func:`attnviz.bench.on_demand_traces.on_demand_trace`: one causal layer whose probabilities
exist only as blocks exp(s − lse) of random q and k (numpy, head size 64, as SmolLM2's), so the figures
are the views' cost plus that provider's; a real model's on-demand trace has its own provider. Figures are
printed by ``attnviz bench --only long``, never asserted.
"""

from __future__ import annotations

import os
import statistics
import time

__all__ = ["measure_long_views"]


def _p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def measure_long_views(T: int = 16384, n_tiles: int = 24, n_frames: int = 40, size=(1000, 800),
                       d_head: int = 64) -> dict:
    """Tile latency (median, p95), overview fill time and pan frames per second of the head map at ``T``.

    Parameters
    ----------
    T : tokens. n_tiles : tiles timed (spread over the finest levels). n_frames : frames of the pan.
    size : the view's size in pixels. d_head : head size of the random q and k.
    """
    import numpy as np

    from attnviz.bench.on_demand_traces import on_demand_trace
    from attnviz.bench.screen import use_headless_screen
    from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells

    trace = on_demand_trace(T, n_layers=1, n_heads=1, d_head=d_head)
    t0 = time.perf_counter()
    trace.deferred["L0.probs"].lse(0)
    lse_s = time.perf_counter() - t0
    od = OnDemandMap(trace, 0, "self", 0)
    t0 = time.perf_counter()
    for _ in od.fill_overview():
        pass
    fill_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    tiles: dict[int, list[float]] = {}
    for n in range(n_tiles):
        level = n % max(od.overview_level, 1)
        span = tile_cells(level) << level  # map rows a tile covers
        i, j = sorted(int(x) for x in rng.integers(0, T // span, 2))[::-1]  # on or below the diagonal
        start = time.perf_counter()
        od.tile((level, i, j))
        tiles.setdefault(level, []).append((time.perf_counter() - start) * 1000)
    every = [t for ts in tiles.values() for t in ts]

    use_headless_screen()
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    app = QApplication.instance() or QApplication([])
    view = HeadMapView(selection=Selection())
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    view.on_demand.cancel()  # the pan is timed on its own; the overview was timed above
    view.on_demand = od  # the filled overview: frames show its cells under tiles not computed yet
    app.processEvents()
    vb = view.heatmap.vb
    frames, exact = [], []
    for n in range(n_frames):  # a 256-token window along the diagonal: level 0, exact values
        c = 128 + (T - 256) * n / max(n_frames - 1, 1)
        start = time.perf_counter()
        vb.setRange(xRange=(c - 128, c + 128), yRange=(c - 128, c + 128), padding=0)
        view.grab()  # the frame, drawn at once (tiles not computed yet show the overview's cells)
        frames.append((time.perf_counter() - start) * 1000)
        t = view.tile
        deadline = time.perf_counter() + 30
        while od.tiles_for(t.level, t.row0 >> t.level, -(-t.row1 >> t.level), t.col0 >> t.level,
                           -(-t.col1 >> t.level)) and time.perf_counter() < deadline:
            app.processEvents()  # the lane delivers the tiles
            time.sleep(0.001)
        exact.append((time.perf_counter() - start) * 1000)
    view.close()
    view.deleteLater()
    app.processEvents()
    out = {"T": T, "head size of q, k": d_head, "row log-sum-exp of one head s": lse_s,
           "overview fill s (one head, whole map, band by band)": fill_s,
           "overview side (cells)": od.overview.shape[0]}
    for level, ts in sorted(tiles.items()):
        side = tile_cells(level) << level
        out[f"tile latency level {level} ({side}x{side} weights) median ms"] = statistics.median(ts)
    out["tile latency median ms (all levels)"] = statistics.median(every)
    out["tile latency p95 ms (all levels)"] = _p95(every)
    out["pan frame median ms (drawn at once)"] = statistics.median(frames)
    out["pan frames per second (median)"] = 1000.0 / statistics.median(frames)
    out["pan frame until exact median ms"] = statistics.median(exact)
    out["pan frame until exact p95 ms"] = _p95(exact)
    out["load average (1 min)"] = os.getloadavg()[0]
    out["goal"] = ">= 30 fps, visible tile <= 50 ms"
    return out
