"""GUI speed figures: time to the first window, to the first attention map, keystroke → views, and the
longest event-loop stall while models load and while a model trains.

``attnviz bench --only gui`` prints :func:`run_gui_benchmarks`. Start-up is measured in a fresh
process launched exactly like ``attnviz`` (the clock starts before the interpreter does); the
keystroke figure types real key events into the input box of a window in this process.
"""

from __future__ import annotations

import json
import os
import statistics
import time

from attnviz.bench.screen import use_headless_screen
from attnviz.bench.startup import measure_startup  # the start-up half, re-exported

__all__ = ["measure_startup", "measure_keystroke", "measure_keystroke_hf", "measure_stalls", "run_gui_benchmarks"]


def _pause(ms: int) -> None:
    # QTest.qWait keeps the GIL in PySide6, which would freeze the workers: spin a real event loop
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _wait(signal, timeout_ms: int) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    got = []

    def done(*args):
        got.append(args)
        loop.quit()

    signal.connect(done)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(done)
    return bool(got)


def _wait_live(win, timeout_s: float = 180.0) -> None:
    """Wait until the live model has replaced the stored opening trace and start-up's background
    imports are over: keystrokes typed before that wait for the model to load, which is start-up's
    figure, not typing's."""
    deadline = time.monotonic() + timeout_s
    while win.loaded is None or not win.warm or win.trace is None or win.trace.description.opening_text is not None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the model did not load: {win.statusBar().currentMessage() or 'no message'}")
        _pause(50)


def _scratch_settings():
    """Settings in a fresh temporary file: a benchmark neither reads the user's layout nor leaves its
    models (e.g. the temporary BERT folder) as the user's last model."""
    import atexit
    import shutil
    import tempfile

    from attnviz.gui.settings import AppSettings

    folder = tempfile.mkdtemp(prefix="attnviz-bench-")
    atexit.register(shutil.rmtree, folder, True)
    return AppSettings(os.path.join(folder, "settings.ini"))


def _views_complete(app, win, timeout_s: float = 30.0) -> None:
    """Process events until no view on screen waits for background work (e.g. the All heads grid's
    statistics of a long trace, drawn as "…" until they come): only then is its figure complete."""
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + timeout_s
    shown = [*win.views_area.visible_views(), win.prediction_panel]  # the panel may compute its row too
    while any(getattr(v, "background_pending", False) for v in shown):
        if time.monotonic() > deadline:
            raise RuntimeError("a view's background work did not finish")
        # sleep until an event comes (with a time limit, processEvents would spin instead of waiting,
        # and its CPU time would count as the keystroke's); the timer makes sure one comes
        QTimer.singleShot(50, app, lambda: None)
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)


def measure_keystroke(model: str | None = None, n: int = 20, text: str | None = None,
                      forward: bool = False) -> dict:
    """Type ``n`` characters into a window (pausing between keys) and time key → every visible view drawn.

    The first key after a pause is run at once (leading edge of the debounce), so the figure is the
    real latency a lecturer sees for one edit: model run in the worker, trace delivery, every visible
    view's ``set_trace``, its background work (if any) and a synchronous repaint. Typing starts once the
    live model is loaded and start-up's background work is over.

    ``forward`` (Hugging Face models): after each key also time the bare forward on the same text, on
    the app's model lane with the app's threads (:func:`attnviz.bench.hf.bare_forward`), so that
    keystroke − forward is what attnviz adds around the model, and the encoder's matrix products alone.

    Returns
    -------
    dict with the model, tokens per run, visible views, median and largest wall ms, median CPU ms of
    all threads per key, and the 1-minute load average while typing; with ``forward`` also the bare
    forward's median wall and CPU ms, the overhead (keystroke median − forward median) and the median wall
    ms of the encoder's linear layers alone (:func:`attnviz.bench.hf.linear_floor`: what no forward beats).
    """
    from PySide6.QtCore import QElapsedTimer, Qt
    from PySide6.QtTest import QTest

    from attnviz.gui.app import create_application
    from attnviz.gui.window.main_window import MainWindow

    app = create_application()
    win = MainWindow(_scratch_settings(), model=model, text=text, autostart=False)
    win.resize(1440, 900)
    win.show()
    win.start()
    try:
        if not (_wait(win.trace_shown, 120000) and (win.views_area.views or _wait(win.views_ready, 60000))):
            raise RuntimeError("the window did not show a first trace")
        _wait_live(win)
        if win.input_panel.mode != "text":
            return {"keystroke_model": win.loaded.name, "keystroke_ms_median": float("nan")}
        win.input_panel.edit.setFocus()
        clock, times, cpu, fwd, fwd_cpu, floor = QElapsedTimer(), [], [], [], [], []
        for i in range(n):
            _pause(250)  # a pause: the next key is a fresh edit, not part of a burst
            key = Qt.Key.Key_Backspace if i % 2 else Qt.Key.Key_Space
            clock.start()
            cpu0 = time.process_time()
            QTest.keyClick(win.input_panel.edit, key)
            if not _wait(win.trace_shown, 30000):
                raise RuntimeError("a keystroke produced no trace")
            _views_complete(app, win)
            for view in win.views_area.visible_views():
                view.repaint()
            app.processEvents()
            times.append(clock.nsecsElapsed() / 1e6)
            # CPU time of all threads: on a shared machine steadier than wall time, which it bounds
            # from below when the run and the drawing do not overlap
            cpu.append((time.process_time() - cpu0) * 1000)
            if forward:  # interleaved with the keys: load from other processes hits both alike
                from attnviz.bench.hf import bare_forward, linear_floor

                _pause(250)
                wall_ms, cpu_ms = win.lane.submit("bench-forward", bare_forward, win.loaded,
                                                  win.input_panel.text).result(60)
                fwd.append(wall_ms)
                fwd_cpu.append(cpu_ms)
                floor.append(win.lane.submit("bench-floor", linear_floor, win.loaded,
                                             win.input_panel.text).result(60)[0])
        out = {"keystroke_model": win.loaded.name, "keystroke_tokens": len(win.trace.tokens),
               "keystroke_visible_views": len(win.views_area.visible_views()),
               "keystroke_ms_median": statistics.median(times), "keystroke_ms_max": max(times),
               "keystroke_cpu_ms_median": statistics.median(cpu), "keystroke_load_1min": os.getloadavg()[0]}
        if fwd:
            out.update(keystroke_forward_ms_median=statistics.median(fwd),
                       keystroke_forward_cpu_ms_median=statistics.median(fwd_cpu),
                       keystroke_overhead_ms=statistics.median(times) - statistics.median(fwd),
                       keystroke_linear_floor_ms_median=statistics.median(floor))
        return out
    finally:
        win.close()
        win.deleteLater()
        app.processEvents()


# charlm reads characters: its example is shorter than a lecture's sentence, so it is typed into at 64
# characters (issue 18's figure) and at its longest input, the model's max_len (max_len - 1 characters; a
# space makes max_len and the backspace takes it away again)
_CHARLM_WORDS = "the quick brown fox jumps over the lazy dog while the cat sleeps"


def charlm_text(n: int | None = None) -> str:
    """``n`` characters for the bundled charlm; by default ``max_len - 1`` (its context read from its
    config.json)."""
    from attnviz.io import assets_dir

    if n is None:
        config = json.loads((assets_dir() / "models" / "charlm" / "config.json").read_text(encoding="utf-8"))
        n = int(config["model"]["max_len"]) - 1
    return ((_CHARLM_WORDS + " ") * (n // len(_CHARLM_WORDS) + 1))[:n]


def measure_keystroke_hf(T: int = 128, n: int = 10) -> dict:
    """Keystroke figure of a BERT-base-size Hugging Face model (random weights written to a temporary
    folder, nothing downloaded) at ``T`` tokens; the goal is 200 ms."""
    import tempfile

    from attnviz.bench.hf import write_bert_base_folder

    with tempfile.TemporaryDirectory() as tmp:
        text = write_bert_base_folder(tmp, T)
        return measure_keystroke(tmp, n=n, text=text, forward=True)


def _stall_figures(meter) -> tuple[float, float, float]:
    gaps = sorted(meter.gaps_ms)
    return meter.max_gap_ms, (gaps[int(0.95 * (len(gaps) - 1))] if gaps else 0.0), meter.max_cpu_gap_ms


def measure_stalls(models: tuple[str, ...], train_task: str = "coref", train_steps: int = 100,
                   stacks: bool = False) -> dict:
    """Longest event-loop gap (and 95th percentile) while models load and run, and while a model trains
    with its live curves on screen: the design's limit is 100 ms (the tests only check that this work
    runs on workers). Loading is measured with the Attention tab in the background, as the views'
    redraw cost is the keystroke figure's; the Training tab's first appearance (before the loads, once
    start-up has settled) is a figure of its own (``training_tab_max_stall_ms``). ``stacks``: also report what the GUI thread did in the
    longest freezes (``load_stalls``, ``train_stalls``; see :class:`attnviz.bench.stall.StackSampler`)."""
    import tempfile

    from attnviz.bench.stall import StallMeter
    from attnviz.gui.app import create_application
    from attnviz.gui.window.main_window import MainWindow

    app = create_application()
    win = MainWindow(_scratch_settings(), model=models[0], autostart=False)
    win.resize(1440, 900)
    win.show()
    win.start()
    out: dict = {}
    try:
        if not _wait(win.trace_shown, 120000):
            raise RuntimeError("the window did not show a first trace")
        # start-up has settled (its imports are over, every view is built in idle time): what follows is
        # the tab switch, loading and training alone
        settle_by = time.monotonic() + 120  # a view that cannot be built stays unbuilt: do not wait for ever
        while (not win.warm or win.views_area.unbuilt()) and time.monotonic() < settle_by:
            _pause(100)
        with StallMeter(sample_stacks=stacks) as meter:  # the Training tab's first appearance: its own figure
            win.tabs.setCurrentWidget(win.training_page)
            _pause(1000)
        out["training_tab_max_stall_ms"], _, out["training_tab_max_stall_cpu_ms"] = _stall_figures(meter)
        if stacks:
            out["training_tab_stalls"] = meter.sampler.report()
        with StallMeter(sample_stacks=stacks) as meter:
            for name in (*models[1:], models[0]):
                win.load_model(name)
                if not _wait(win.trace_shown, 120000):
                    raise RuntimeError(f"{name} showed no trace")
        out["load_max_stall_ms"], out["load_p95_stall_ms"], out["load_max_stall_cpu_ms"] = _stall_figures(meter)
        if stacks:
            out["load_stalls"] = meter.sampler.report()
        panel = win.training
        panel.task_box.setCurrentText(train_task)
        while panel._defaults.get("name") != train_task:
            _pause(50)
        panel.steps_box.setValue(train_steps)
        with tempfile.TemporaryDirectory() as tmp:
            panel.out_edit.setText(os.path.join(tmp, "run"))
            with StallMeter(sample_stacks=stacks) as meter:
                panel.start()
                if not _wait(panel.finished, 600000):
                    raise RuntimeError("training did not finish")
        out["train_max_stall_ms"], out["train_p95_stall_ms"], out["train_max_stall_cpu_ms"] = _stall_figures(meter)
        if stacks:
            out["train_stalls"] = meter.sampler.report()
        return out
    finally:
        win.close()
        win.deleteLater()
        app.processEvents()


def _stall_causes(report: list[dict]) -> str:
    """One line per freeze: its length and the GUI thread's most sampled stack (innermost 3 frames)."""
    lines = []
    for freeze in report:
        count, stack = freeze["stacks"][0] if freeze["stacks"] else (0, "?")
        lines.append(f"{freeze['ms']:.0f} ms: {' < '.join(stack.split(' < ')[:3])} ({count}/{freeze['samples']})")
    return "\n    ".join(lines) or "none sampled"


def run_gui_benchmarks(models: tuple[str, ...] | None = None, stacks: bool | None = None,
                       launches: int = 5) -> dict:
    """All GUI figures for ``attnviz bench --only gui`` (bundled models; the default one for start-up, over
    ``launches`` ordinary launches: the medians of its times, the worst of its stalls).

    ``stacks`` (default: the environment variable ``ATTNVIZ_BENCH_STACKS=1``) adds what the GUI thread
    was doing in the longest freezes of start-up, model loading and training (``*_stall_causes``)."""
    use_headless_screen()
    from attnviz.io import bundled_models

    if stacks is None:
        stacks = os.environ.get("ATTNVIZ_BENCH_STACKS") == "1"
    out: dict = {}
    import tempfile

    launches = max(1, int(launches))
    with tempfile.TemporaryDirectory(prefix="attnviz-bench-cache-") as cache:
        # the very first launch makes the import plans the later ones read (attnviz.gui.startup.plan_cache):
        # its own figure; the start-up figures below are ordinary launches'
        out["startup_first_attention_first_launch_s"] = measure_startup(cache_dir=cache)["first_attention_s"]
        # start-up varies by ±0.15 s from launch to launch on a shared machine: several launches, the
        # medians of the times and the worst of the stalls (the goal is no stall over 100 ms, ever)
        launched = [measure_startup(stacks=stacks, cache_dir=cache) for _ in range(launches)]
    out["startup_launches"] = launches
    for key in ("first_window_s", "first_attention_s", "live_attention_s", "settled_s"):
        values = sorted(r[key] for r in launched)
        out[f"startup_{key}"] = statistics.median(values)
        out[f"startup_{key}_range"] = f"{values[0]:.3f}-{values[-1]:.3f}"
    for key in ("startup_max_stall_ms", "startup_max_stall_cpu_ms", "startup_to_live_max_stall_ms",
                "startup_to_live_max_stall_cpu_ms", "startup_to_settled_max_stall_ms",
                "startup_to_settled_max_stall_cpu_ms"):
        out[key] = max(r[key] for r in launched)  # the worst launch's
    cold = max(launched, key=lambda r: r["startup_to_settled_max_stall_ms"])  # its stalls' causes, if sampled
    if stacks:
        out["startup_stall_causes"] = _stall_causes(cold.get("stalls", []))
    names = models if models is not None else tuple(m for m in bundled_models() if m != "shapes" and m != "digits")
    if len(names) >= 2:
        stalls = measure_stalls(names[:3], stacks=stacks)
        for key in ("training_tab_stalls", "load_stalls", "train_stalls"):
            if key in stalls:
                stalls[key.replace("_stalls", "_stall_causes")] = _stall_causes(stalls.pop(key))
        out.update(stalls)
    runs = [(name, None) for name in names if name != "charlm"]
    if "charlm" in names:
        runs += [("charlm", 64), ("charlm", None)]
    for name, n_chars in runs:
        text = charlm_text(n_chars) if name == "charlm" else None
        fig = measure_keystroke(name, n=10, text=text)
        key = f"{name}@{len(text)}" if text is not None else name
        out[f"keystroke_ms_median[{key}]"] = fig["keystroke_ms_median"]
        out[f"keystroke_ms_max[{key}]"] = fig["keystroke_ms_max"]
        out[f"keystroke_cpu_ms_median[{key}]"] = fig["keystroke_cpu_ms_median"]
    out.update(_hf_keystroke_figures())
    return out


def _hf_keystroke_figures() -> dict:
    """The BERT-base keystroke figures, or why there are none (transformers is an optional extra)."""
    from attnviz.errors import AttnvizError

    try:
        fig = measure_keystroke_hf()
    except AttnvizError as exc:
        return {"keystroke_hf_bert_base": f"not measured: {exc}"}
    name = f"hf-bert-base-T{fig.get('keystroke_tokens')}"
    # the bare forward beside the keystroke: overhead = keystroke − forward is attnviz's share
    return {f"keystroke_ms_median[{name}]": fig["keystroke_ms_median"],
            f"keystroke_ms_max[{name}]": fig["keystroke_ms_max"],
            f"keystroke_cpu_ms_median[{name}]": fig["keystroke_cpu_ms_median"],
            f"keystroke_forward_ms[{name}]": fig["keystroke_forward_ms_median"],
            f"keystroke_forward_cpu_ms[{name}]": fig["keystroke_forward_cpu_ms_median"],
            f"keystroke_overhead_ms[{name}]": fig["keystroke_overhead_ms"],
            # the encoder's matrix products alone: no forward on this machine is faster
            f"keystroke_linear_floor_ms[{name}]": fig["keystroke_linear_floor_ms_median"]}


if __name__ == "__main__":  # python -m attnviz.bench.gui: the same figures without the CLI
    for key, value in run_gui_benchmarks().items():
        print(f"{key:<44} {value:.3f}" if isinstance(value, float) else f"{key:<44} {value}")
