"""How long File ▸ Export figure… and Copy figure freeze the app's event loop (issue 18: none over 100 ms).

A real MainWindow (off screen, scratch settings) exports the current figure of several views — head
map, layers × heads grid, token lines, the step-by-step walkthrough, a vision model's rollout
overlay and the training page — as PNG, SVG and PDF at the 1920×1080 slide preset, and copies each
to the clipboard; then File ▸ Save scene…. The
modal dialog is bypassed: the benchmark calls what the dialog's OK button calls. For each export it
reports the longest event-loop gap (``StallMeter``), the wall time from the click to the file being
in place, and the CPU time of all threads.
"""

from __future__ import annotations

import os
import tempfile
import time

__all__ = ["measure_export_stalls", "EXPORT_CASES"]

# (label, where the view lives, its dock name): "views" docks of the Attention tab, the walkthrough page
EXPORT_CASES = (("head map", "views", "HeadMapView"), ("layers x heads", "views", "ModelView"),
                ("token lines", "views", "TokenLinesView"), ("walkthrough", "walkthrough", None),
                ("vision rollout", "vision", "RolloutView"), ("training page", "training", None))


def _pause(ms: int) -> None:
    # a real event loop: QTest.qWait keeps the GIL in PySide6 and would freeze the workers
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _wait_until(ready, what: str, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        _pause(50)


def _live(win) -> bool:
    """The live model's trace is on screen and start-up's background imports are over."""
    return (win.loaded is not None and win.warm and win.trace is not None
            and win.trace.description.opening_text is None)


def _open_window(model: str, folder: str):
    from attnviz.gui.app import create_application
    from attnviz.gui.window.main_window import MainWindow
    from attnviz.gui.settings import AppSettings

    app = create_application()
    # scratch settings: neither the user's layout nor their last model is read or changed
    win = MainWindow(AppSettings(os.path.join(folder, "settings.ini")), model=model, autostart=False)
    win.resize(1440, 900)
    win.show()
    win.start()
    _wait_until(lambda: _live(win), f"{model} to load")
    return app, win


def _view_for(win, where: str, dock: str | None, vision_model: str):
    if where == "training":  # not a registered figure: the page itself is painted (QWidget.render)
        win.tabs.setCurrentWidget(win.training_page)
        _pause(200)
        return win.training_page
    if where == "walkthrough":
        win.tabs.setCurrentWidget(win.walkthrough_page)
        _wait_until(lambda: win.walkthrough is not None, "the walkthrough")
        _pause(200)
        return win.walkthrough.current_view()
    if where == "vision" and win.trace.kind != "vit":
        win.tabs.setCurrentWidget(win.views_area)
        win.load_model(vision_model)
        _wait_until(lambda: _live(win) and win.trace.kind == "vit", f"{vision_model} to load")
    win.tabs.setCurrentWidget(win.views_area)
    return win.views_area.build(dock)


def _timed(run) -> dict:
    """Run ``run()`` (which returns once the export is complete) under the stall meter."""
    from attnviz.bench.stall import StallMeter

    cpu0, t0 = time.process_time(), time.perf_counter()
    with StallMeter() as meter:
        run()
    return {"max_stall_ms": meter.max_gap_ms, "wall_ms": (time.perf_counter() - t0) * 1000,
            "cpu_ms": (time.process_time() - cpu0) * 1000}


def _until_idle(runner) -> None:
    """Spin the event loop until the window's export has ended (its file is in place or it failed)."""
    from PySide6.QtCore import QEventLoop

    loop = QEventLoop()
    runner.busy_changed.connect(lambda busy: busy or loop.quit())
    if runner.busy:
        loop.exec()
    _pause(20)  # a few event-loop turns after it, so the meter sees the loop running again


def _export(win, view, path, opts, style) -> None:
    from attnviz.gui.window.figure_actions import exporter, start_export

    start_export(win, view, path, opts, style)  # what the dialog's OK does
    _until_idle(exporter(win))


def _copy(win, view) -> None:
    from attnviz.gui.window.figure_actions import copy_figure, exporter

    win.current_figure = lambda: view  # File ▸ Copy figure on this view, whatever has the focus
    try:
        copy_figure(win)
        _until_idle(exporter(win))
    finally:
        del win.current_figure


def _save_scene(win, path) -> None:
    from attnviz.gui.window.scene_actions import save_scene_as

    if save_scene_as(win, path) is None:  # File ▸ Save scene… with its file name given
        raise RuntimeError("the scene was not saved")
    _pause(20)


def measure_export_stalls(model: str = "coref", vision_model: str = "shapes",
                          formats: tuple[str, ...] = ("png", "svg", "pdf"), preset: str = "16:9",
                          cases=EXPORT_CASES) -> dict:
    """Export and copy the current figure of each case in a real window; see the module docstring.

    Returns
    -------
    dict: ``"<case> <FMT|copy> max stall ms"``, ``"… wall ms"`` (click to file in place and notice
    shown) and ``"… cpu ms"`` (all threads) per export and for Save scene, the worst export stall, the
    stall of the window's first notice (not the export's own), and the 1-minute load average.
    """
    from attnviz.bench.screen import use_headless_screen

    use_headless_screen()
    from attnviz.figures.render import ExportOptions
    from attnviz.figures.registry import export_style

    opts, style = ExportOptions.preset(preset), export_style()
    out: dict = {"export_model": model, "export_vision_model": vision_model, "export_size": f"{opts.width}x{opts.height}"}
    with tempfile.TemporaryDirectory(prefix="attnviz-bench-export-") as folder:
        app, win = _open_window(model, folder)
        try:
            # the window's first notice: its strip floats over the tab row (it used to take a layout row,
            # and every view re-laid out to the lower height); measured apart from the exports' figures
            # once the views hidden at start-up are built in idle time, which would be counted here too
            _wait_until(lambda: win.views_installed, "the views to be installed")
            _pause(300)
            fig = _timed(lambda: (win.notify("measuring the export figures", "info"), _pause(300)))
            out["first notice (notice bar appears) max stall ms"] = fig["max_stall_ms"]
            fig = _timed(lambda: (win.notify("a longer warning that wraps onto a second line " * 4, "warning"),
                                  _pause(150), win.notice.dismiss(), _pause(150)))
            out["a warning notice comes and goes max stall ms"] = fig["max_stall_ms"]
            for label, where, dock in cases:
                view = _view_for(win, where, dock, vision_model)
                if view is None:
                    out[f"{label}"] = "not measured: the view could not be built"
                    continue
                for fmt in formats:
                    path = os.path.join(folder, f"{label.replace(' ', '_')}.{fmt}")
                    fig = _timed(lambda: _export(win, view, path, opts, style))
                    if not os.path.exists(path):
                        raise RuntimeError(f"{label} {fmt}: no file was written")
                    for key, value in fig.items():
                        out[f"{label} {fmt.upper()} {key.replace('_ms', ' ms').replace('_', ' ')}"] = value
                fig = _timed(lambda: _copy(win, view))
                for key, value in fig.items():
                    out[f"{label} copy {key.replace('_ms', ' ms').replace('_', ' ')}"] = value
            win.tabs.setCurrentWidget(win.views_area)
            fig = _timed(lambda: _save_scene(win, os.path.join(folder, "scene.json")))
            for key, value in fig.items():
                out[f"save scene {key.replace('_ms', ' ms').replace('_', ' ')}"] = value
        finally:
            win.close()
            win.deleteLater()
            app.processEvents()
    stalls = [v for k, v in out.items() if k.endswith("max stall ms") and "notice" not in k]
    out["export worst stall ms"] = max(stalls, default=float("nan"))
    out["export goal"] = "no event-loop stall over 100 ms"
    out["load 1 min"] = os.getloadavg()[0]
    return out


if __name__ == "__main__":  # python -m attnviz.bench.export_stall
    for key, value in measure_export_stalls().items():
        print(f"{key:<44} {value:.1f}" if isinstance(value, float) else f"{key:<44} {value}")
