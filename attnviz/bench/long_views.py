"""The head map of a 16,384-token input asked for in blocks: tile latency, pan and zoom frames, overview fill.

The trace is :func:`attnviz.bench.on_demand_traces.capture_format_trace`: one causal layer of random q and k
(head size 64, as SmolLM2's) in the capture's own on-demand form, so blocks come from the provider a real
model's long trace uses. Figures are printed by ``attnviz bench --only long``, never asserted.

A frame is one range change of the view (what a mouse drag or wheel step does) and one turn of the event
loop, which paints the figure's canvas (paints per frame are counted) and draws tiles that arrived; wall and
CPU time are both reported (the machine is often busy). Paths:

* *drag*: a 256-token window moved by 32 tokens a frame along the diagonal (level 0: exact values);
* *jump*: the same window moved by ~560 tokens a frame (every label and tile new);
* *zoom*: from the whole map to 256 tokens, ×1.15 a frame (every level).

Tiles are computed on their own lane while the frames run, nearest the centre first; a tile's latency is from
the first frame that lacked it to the moment it was stored while still in view (a tile that left the view first
and came later with the ring is printed apart) (the centre tile of a frame: the first one it
asked for; a zoom step at a coarse level asks for many, each covering a 512 × 512 block, so its last ones
come later). After the visible tiles the view asks for the ring of tiles around them (prefetched for the
next frames): a tile a frame never lacked is not in the latency figures, so the share of tiled frames that
lacked none is printed beside them. The overview is filled beforehand and timed on its own; each path starts
with no tiles computed.
"""

from __future__ import annotations

import math
import os
import statistics
import time

__all__ = ["measure_long_views"]


def _p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile (never below the median of a few values)."""
    return sorted(values)[min(len(values) - 1, math.ceil(0.95 * (len(values) - 1)))] if values else float("nan")


def _paint_counter_class():
    from PySide6.QtCore import QEvent, QObject

    class PaintCounter(QObject):
        """Counts the paint events of the object it filters."""

        count = 0

        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint:
                self.count += 1
            return False

    return PaintCounter


def _PaintCounter():  # noqa: N802 - made when Qt is imported (this module is imported without Qt)
    return _paint_counter_class()()


def _paths(T: int, n: int) -> dict[str, list[tuple[float, float]]]:
    """(centre, half width) of each frame of each path."""
    drag = [(T / 4 + 32 * i, 128.0) for i in range(n)]
    jump = [(128 + (T - 256) * i / max(n - 1, 1), 128.0) for i in range(n)]
    zoom = [(T * 0.4, T / 2 / 1.15 ** i) for i in range(n) if T / 2 / 1.15 ** i >= 128]
    return {"drag": drag, "jump": jump, "zoom": zoom}


def _block_times(trace, T: int, layer: int, head: int, n: int = 7) -> dict:
    """Median wall and CPU ms of blocks asked of the trace itself: a 512 × 512 tile across the diagonal, one
    below it, and a 256-row band of every key (an overview step), in the middle of the map."""
    mid = T // 2
    cases = {"512x512 block across the diagonal": (slice(mid, mid + 512), slice(mid, mid + 512)),
             "512x512 block below the diagonal": (slice(mid + 512, mid + 1024), slice(mid // 2, mid // 2 + 512)),
             f"256-row band x {T:,} keys": (slice(mid, mid + 256), slice(None))}
    out = {}
    for name, (rows, cols) in cases.items():
        trace.probs(layer, heads=head, rows=rows, cols=cols)  # warm (row norms, caches)
        wall, cpu = [], []
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.thread_time()
            trace.probs(layer, heads=head, rows=rows, cols=cols)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
        out[f"{name}: median ms (wall)"] = statistics.median(wall)
        out[f"{name}: median ms (CPU)"] = statistics.median(cpu)
    return out


def measure_long_views(T: int = 16384, n_tiles: int = 24, n_frames: int = 40, size=(1000, 800),
                       d_head: int = 64, trace=None, layer: int = 0, head: int = 0) -> dict:
    """Tile latency (median, p95), overview fill time and frames per second of the head map at ``T``.

    Parameters
    ----------
    T : tokens. n_tiles : tiles timed alone (spread over the tiled levels). n_frames : frames of each path.
    size : the view's size in pixels. d_head : head size of the random q and k.
    trace, layer, head : a model's own long trace (e.g. ``attnviz.open_trace`` of a saved one) and the map of it
        to show instead of the random one (``T`` and ``d_head`` are then the trace's).
    """
    import numpy as np

    from attnviz.bench.on_demand_traces import capture_format_trace
    from attnviz.bench.screen import use_headless_screen
    from attnviz.gui.views.on_demand_map import OnDemandMap, tile_cells

    if trace is None:
        trace = capture_format_trace(T, n_heads=1, d_head=d_head)
    else:
        T, d_head = trace.probs_shape(layer, "self")[1], trace[f"L{layer}.q"].shape[-1]
    od = OnDemandMap(trace, layer, "self", head)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in od.fill_overview():
        pass
    fill_s, fill_cpu = time.perf_counter() - t0, time.process_time() - c0
    rng = np.random.default_rng(0)
    alone: dict[int, list[float]] = {}
    for n in range(n_tiles):
        level = n % max(od.overview_level, 1)
        span = tile_cells(level) << level  # map rows a tile covers
        i, j = sorted(int(x) for x in rng.integers(0, T // span, 2))[::-1]  # on or below the diagonal
        start = time.perf_counter()
        od.tile((level, i, j))
        alone.setdefault(level, []).append((time.perf_counter() - start) * 1000)
    every = [t for ts in alone.values() for t in ts]
    blocks = _block_times(trace, T, layer, head)

    use_headless_screen()
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.selection import Selection

    app = QApplication.instance() or QApplication([])
    selection = Selection()
    selection.update(layer=layer, head=head)
    view = HeadMapView(selection=selection)
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    view.on_demand.cancel()  # the frames are timed on their own; the overview was timed above

    def fresh_map() -> OnDemandMap:
        """An empty tile cache over the overview filled above (and its coarser levels)."""
        if view.on_demand is not None:
            view.on_demand.cancel()  # its pump stops at its next tile
        m = OnDemandMap(trace, layer, "self", head)
        m.overview, m.overview_rows, m._coarser = od.overview, od.overview_rows, od._coarser
        view.on_demand = m
        return m

    shown = fresh_map()
    view.heatmap.vb.setRange(xRange=(0, T), yRange=(0, T), padding=0)
    app.processEvents()
    vb, canvas = view.heatmap.vb, view.canvas.viewport()
    paints = _PaintCounter()
    canvas.installEventFilter(paints)  # a frame is one paint: counted, so a frame that drew nothing shows
    out = {"T": T, "head size of q, k": d_head, "view px": f"{size[0]}x{size[1]}"}
    out["overview fill s (one head, whole map, band by band)"] = fill_s
    out["overview fill CPU s"] = fill_cpu
    for level, ts in sorted(alone.items()):
        side = tile_cells(level) << level
        out[f"tile alone level {level} ({side}x{side} weights) median ms"] = statistics.median(ts)
    out["tile alone median ms (all levels)"] = statistics.median(every)
    out.update(blocks)
    out["tile alone p95 ms (all levels)"] = _p95(every)
    every_tile, first_tile = [], []
    for name, frames in _paths(T, n_frames).items():
        wall, cpu = [], []
        asked: dict = {}  # tile -> when a frame first lacked it
        first: dict = {}  # the tile nearest the centre of a frame that lacked tiles -> when
        # each path starts from no tiles: a path's frames never find the tiles an earlier path computed
        # (the drag ends near the zoom's centre at 8,192 tokens)
        shown = fresh_map()
        complete = 0  # frames whose visible tiles were all computed already (prefetched or from before)
        for centre, half in frames:
            start, c_start = time.perf_counter(), time.thread_time()
            vb.setRange(xRange=(centre - half, centre + half), yRange=(centre - half, centre + half), padding=0)
            app.processEvents()  # the frame, as the event loop paints it (and tiles arrived meanwhile)
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.thread_time() - c_start) * 1000)  # the GUI thread's: tiles run on another
            complete += view.tile.level < shown.overview_level and not shown.last_missing
            for key in shown.last_missing:
                asked.setdefault(key, start)
            if shown.last_missing:
                first.setdefault(shown.last_missing[0], start)
        t = view.tile
        deadline = time.perf_counter() + 60
        while shown.tiles_for(t.level, t.row0 >> t.level, -(-t.row1 >> t.level), t.col0 >> t.level,
                              -(-t.col1 >> t.level)) and time.perf_counter() < deadline:
            app.processEvents()  # the last view's tiles
            time.sleep(0.002)
        out[f"{name}: frames"] = len(wall)
        out[f"{name}: paints of the canvas per frame"] = paints.count / max(len(wall), 1)
        paints.count = 0
        out[f"{name}: frame median ms (wall)"] = statistics.median(wall)
        out[f"{name}: frame p95 ms (wall)"] = _p95(wall)
        out[f"{name}: frame median ms (GUI thread CPU)"] = statistics.median(cpu)
        out[f"{name}: frames per second (median wall)"] = 1000.0 / statistics.median(wall)
        out[f"{name}: tiled frames with every visible tile already computed"] = f"{complete} / {len(wall)}"
        done = shown.done_at
        # tiles panned past before they came are dropped (latest wins): they are never drawn, so not counted
        # a tile that left the view before it came (a zoom step's edge) but was computed later as part of the
        # ring is counted apart: it was never waited for on screen
        got = [(done[k] - t) * 1000 for k, t in asked.items() if k in done and k in shown.done_in_view]
        late = [(done[k] - t) * 1000 for k, t in asked.items() if k in done and k not in shown.done_in_view]
        near = [(done[k] - t) * 1000 for k, t in first.items() if k in done]
        every_tile += got
        first_tile += near
        if got:
            out[f"{name}: tiles drawn while in view / asked"] = f"{len(got)} / {len(asked)}"
            if late:
                out[f"{name}: tiles that left the view, computed later (ring): p95 ms"] = _p95(late)
                out[f"{name}: any tile asked, in view or not, p95 ms (the earlier rows' measure)"] = _p95(got + late)
            out[f"{name}: centre tile of a frame ready median ms"] = statistics.median(near)
            out[f"{name}: centre tile of a frame ready p95 ms"] = _p95(near)
            out[f"{name}: any visible tile ready median ms"] = statistics.median(got)
            out[f"{name}: any visible tile ready p95 ms"] = _p95(got)
    if every_tile:
        out["centre tile of a frame ready median ms (all paths)"] = statistics.median(first_tile)
        out["centre tile of a frame ready p95 ms (all paths)"] = _p95(first_tile)
        out["any visible tile ready median ms (all paths)"] = statistics.median(every_tile)
        out["any visible tile ready p95 ms (all paths)"] = _p95(every_tile)
    view.close()
    view.deleteLater()
    app.processEvents()
    out["load average (1 min)"] = os.getloadavg()[0]
    out["goal"] = ">= 30 fps, visible tile <= 50 ms"
    return out
