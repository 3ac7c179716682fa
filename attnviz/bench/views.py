"""Timing of the views' hot paths on synthetic traces (``attnviz bench`` can call these).

Each function builds its view off-screen, forces a synchronous repaint after every change (so the
time includes Qt drawing, not only numpy) and writes one line per case to ``out``; it also returns
the figures so tests and the CLI can check them.
"""

from __future__ import annotations

import statistics
import sys
import time

__all__ = ["benchmark_head_switch", "benchmark_model_grid"]

GOALS_MS = {"head_switch_2048": 16.0, "head_switch_4096": 30.0, "model_grid_128": 50.0}


def _app():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(sys.argv[:1])


def _time_ms(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``fn(i)``; CPU time is the figure to trust on a shared
    machine (wall time then includes waiting for a core)."""
    wall, cpu = [], []
    for i in range(repeats):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn(i)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def benchmark_head_switch(T_list=(64, 512, 2048, 4096), n_heads: int = 4, repeats: int = 8, size=(1000, 800),
                          out=sys.stdout) -> dict[int, dict[str, float]]:
    """Median ms for one head switch of :class:`HeadMapView` (compute + synchronous repaint).

    ``warm``: the layer's other heads' level-of-detail pyramids were built by the background prefetch
    (the normal case after a layer is opened); ``cold``: the head's pyramid is built on the spot
    (T > 1024 only; the same for ≤ 1024).
    Returns {T: {"warm_wall", "warm_cpu", "cold_wall", "cold_cpu"}} in ms.
    """
    from attnviz.gui.views.head_map_view import HeadMapView
    from attnviz.bench.traces import synthetic_trace
    from attnviz.selection import Selection

    app = _app()
    results = {}
    for T in T_list:
        trace = synthetic_trace(T, n_layers=2, n_heads=n_heads, causal=True)
        sel = Selection()
        view = HeadMapView(sel)
        view.resize(*size)
        view.show()
        view.set_trace(trace)
        app.processEvents()

        def switch(i, sel=sel, view=view):
            sel.update(head=(sel.head + 1) % n_heads)
            view.canvas.viewport().repaint()

        cold = None
        pyramids = view._pyramids
        if pyramids is not None:
            pyramids.cancel()
            sel.update(layer=1)  # a fresh layer: its heads' pyramids are not built yet
            pyramids = view._pyramids
            pyramids.cancel()
            pyramids._done.clear()
            cold = _time_ms(lambda i: (pyramids._done.clear(), switch(i)), repeats)
            pyramids._cancelled = False
            pyramids.prefetch(first=sel.head).result()
        warm = _time_ms(switch, repeats)
        results[T] = {"warm_wall": warm[0], "warm_cpu": warm[1],
                      "cold_wall": (cold or warm)[0], "cold_cpu": (cold or warm)[1]}
        line = f"head switch T={T:5d}: {warm[0]:6.1f} ms wall, {warm[1]:6.1f} ms CPU"
        if cold:
            line += f"  (cold, pyramid built on the spot: {cold[0]:.1f} ms wall, {cold[1]:.1f} ms CPU)"
        out.write(line + "\n")
        view.close()
        view.deleteLater()
        app.processEvents()
    return results


def benchmark_model_grid(T: int = 128, n_layers: int = 12, n_heads: int = 12, repeats: int = 5, size=(1200, 900),
                         out=sys.stdout) -> dict[str, float]:
    """Median ms to redraw the full layers × heads thumbnail grid of :class:`ModelView` for a new trace."""
    from PySide6.QtCore import QEventLoop, QTimer

    from attnviz.gui.views.model_view import ModelView
    from attnviz.bench.traces import synthetic_trace
    from attnviz.selection import Selection

    app = _app()
    traces = [synthetic_trace(T, n_layers=n_layers, n_heads=n_heads, causal=False, seed=s) for s in range(2)]
    view = ModelView(Selection())
    view.resize(*size)
    view.show()
    view.set_trace(traces[1])
    app.processEvents()

    def update(i):
        view.set_trace(traces[i % 2])
        while view.background_pending:  # the statistics (a worker's) belong to the figure: it waits for them
            QTimer.singleShot(50, app, lambda: None)  # a wake-up: waiting for events must not hang
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)  # sleeps until one comes
        view.canvas.viewport().repaint()

    wall, cpu = _time_ms(update, repeats)
    out.write(f"model grid {n_layers}x{n_heads} at T={T}: {wall:.1f} ms wall, {cpu:.1f} ms CPU per update\n")
    view.close()
    view.deleteLater()
    app.processEvents()
    return {"wall": wall, "cpu": cpu}
