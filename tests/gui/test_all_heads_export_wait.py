"""The app's export of a long input's All heads page never computes a head on the GUI thread: the heads of the
slide's page are computed on the views' lane while the event loop keeps turning, the exporter says how far they
are, the file appears only once they have arrived (the figure painted complete), and Cancel stops them with no
file written. (It computed every head inside ``ensure_current`` on the GUI thread: ~10 s for 36 heads at 4,096
tokens on a 30 × 9 model, the window frozen.)"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402


LONG = 300_000  # ms: a generous bound for the slow shared machine, never a measurement


@pytest.fixture(scope="module")
def long_trace():
    from tests.gui.long_llama_trace import long_llama_trace

    return long_llama_trace(600)


@pytest.fixture
def long_view(qtbot, monkeypatch, long_trace):
    """The All heads view on screen treating the trace as too long for every head at once, its page computed."""
    from tests.gui.long_llama_trace import long_grid_view

    view = long_grid_view(qtbot, monkeypatch, long_trace)
    assert view._long is not None
    qtbot.waitUntil(lambda: not view.background_pending, timeout=LONG)  # the lane is free for the export
    return view


class _Watch:
    """Wraps the page's head computation: which thread computes each head, how often the GUI thread's timer
    ticked meanwhile, and whether the file was already there. ``hold`` keeps each head's worker until asked to
    stop (the cancel test)."""

    def __init__(self, monkeypatch, path, hold: bool = False):
        from PySide6.QtCore import QTimer

        from attnviz.gui.views import all_heads_long

        self.path, self.hold, self.heads, self.ticks = path, hold, [], 0
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)
        self.timer.start(5)
        real = all_heads_long.page_overviews

        def watched(trace, part, heads, *args, stop=lambda: False, **kwargs):
            for overview in real(trace, part, heads, *args, stop=stop, **kwargs):
                on_gui = threading.current_thread() is threading.main_thread()
                seen = self.ticks
                # a worker waits for two ticks of the GUI thread's timer: they come while the event loop turns
                # (on the GUI thread itself none could: the bound only keeps a failing run from hanging)
                end = time.monotonic() + 20
                while not on_gui and self.ticks < seen + 2 and time.monotonic() < end:
                    time.sleep(0.005)
                while self.hold and not on_gui and not stop() and time.monotonic() < end:
                    time.sleep(0.005)
                self.heads.append((on_gui, self.ticks - seen, path.exists(), (overview.layer, overview.head)))
                yield overview

        monkeypatch.setattr(all_heads_long, "page_overviews", watched)

    def _tick(self):
        self.ticks += 1


def _export(view, path):
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.gui.figure_export import FigureExport

    runner = FigureExport()
    seen = {"texts": [], "done": [], "failed": []}
    runner.progress.connect(seen["texts"].append)
    runner.done.connect(seen["done"].append)
    runner.failed.connect(seen["failed"].append)
    runner.export(view, view.trace, view.state, path, ExportOptions(), export_style())
    return runner, seen


def test_the_heads_are_computed_off_the_gui_thread_and_the_file_comes_after(qtbot, monkeypatch, long_view, tmp_path):
    from attnviz.gui.views.model_view import ModelView
    from attnviz.gui.widgets.legible import is_exporting

    path = tmp_path / "all-heads.png"
    watch = _Watch(monkeypatch, path)
    painted = []  # the export figure's title as laid out for each paint: the last one is what the file holds
    real_after = ModelView._after_relayout

    def after_relayout(self):
        real_after(self)
        if is_exporting():
            painted.append(self.title_item.text)

    monkeypatch.setattr(ModelView, "_after_relayout", after_relayout)
    on_screen = {(int(a), int(b)) for a, b in zip(*long_view._long.done.nonzero())}  # computed for the screen
    assert on_screen
    runner, seen = _export(long_view, path)
    qtbot.waitUntil(lambda: bool(seen["done"] or seen["failed"]), timeout=LONG)
    assert seen["failed"] == [] and seen["done"] == [path] and path.stat().st_size > 0
    assert watch.heads, "the slide's page computed no head"
    # the heads the screen's grid computed are not computed again for the export (one set a trace)
    assert not on_screen & {h for *_, h in watch.heads}, (sorted(on_screen), watch.heads)
    on_gui = [h for on, _, _, h in watch.heads if on]
    assert on_gui == [], f"heads computed on the GUI thread (the window frozen meanwhile): {on_gui}"
    assert all(ticks >= 2 for _, ticks, _, _ in watch.heads), watch.heads  # the event loop turned meanwhile
    assert not any(there for _, _, there, _ in watch.heads)  # the file appears after the heads, never before
    n = len(watch.heads)
    assert seen["texts"][0].startswith(f"computing heads 0/{n} for the export")
    counts = [int(t.split()[2].split("/")[0]) for t in seen["texts"]]  # said as they were polled: rising
    assert counts == sorted(counts) and len(set(counts)) == len(counts), seen["texts"]
    # painted once to lay the slide out (which asks for its page), then again complete: that is the file
    assert len(painted) == 2 and "computing" in painted[0] and "computing" not in painted[-1], painted
    # the screen's own view kept its page; the export's figure is gone
    assert not runner.busy and long_view._long is not None


def test_cancel_stops_the_heads_and_writes_no_file(qtbot, monkeypatch, long_view, tmp_path):
    from attnviz.gui.workers import views_lane

    path = tmp_path / "cancelled.png"
    watch = _Watch(monkeypatch, path, hold=True)
    runner, seen = _export(long_view, path)
    qtbot.waitUntil(lambda: bool(seen["texts"]), timeout=LONG)  # waiting for the page's first head
    assert runner.busy and not path.exists()
    runner.cancel()
    assert not runner.busy
    qtbot.waitUntil(lambda: not views_lane().busy, timeout=LONG)
    qtbot.wait(50)  # any late delivery would have come by now
    # the worker stopped within the head it was computing or held (the page has more: the test above computes all)
    assert len(watch.heads) <= 1, watch.heads
    assert not path.exists() and seen["done"] == [] and seen["failed"] == []
    assert [p for p in tmp_path.iterdir()] == []  # no temporary file left either


def test_the_status_bar_says_how_far_and_its_cancel_stops_the_export(qtbot, monkeypatch):
    """The window's side: the exporter's progress in the status bar, a Cancel button while it runs that cancels
    it and says no file was written; gone when the export ends."""
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QMainWindow

    from attnviz.gui.window import figure_actions

    class Runner(QObject):  # the exporter's signals, its busy state and cancel
        busy_changed, done, failed, progress = Signal(bool), Signal(object), Signal(object), Signal(str)

        def __init__(self):
            super().__init__()
            self.busy, self.cancelled = False, 0

        def set_busy(self, on):
            self.busy = on
            self.busy_changed.emit(on)

        def cancel(self):
            self.cancelled += 1
            self.set_busy(False)

    class Window(QMainWindow):
        def __init__(self):
            super().__init__()
            self.notices, self.figure_export = [], None

        def notify(self, text, level="error"):
            self.notices.append((text, level))

    from attnviz.gui import figure_export

    win = Window()
    qtbot.addWidget(win)
    win.statusBar()
    win.show()
    runner = Runner()
    monkeypatch.setattr(figure_export, "FigureExport", lambda parent: runner)
    assert figure_actions.exporter(win) is runner  # wired to the window
    runner.set_busy(True)
    button = win.export_cancel_button
    assert button.isVisible() and win.statusBar().currentMessage() == "Exporting the figure…"
    runner.progress.emit("computing heads 12/36 for the export (from q and k)… (Cancel stops it)")
    assert win.statusBar().currentMessage().startswith("computing heads 12/36 for the export")
    button.click()
    assert runner.cancelled == 1 and not button.isVisible() and not runner.busy
    assert win.notices == [("export cancelled: no file was written", "info")]
    runner.set_busy(True)
    runner.set_busy(False)  # an export that ends on its own: the button goes, nothing more is said
    assert not button.isVisible() and len(win.notices) == 1 and runner.cancelled == 1


def test_a_grid_pooled_whole_on_the_lane_is_waited_for_too(qtbot, monkeypatch, tmp_path):
    """An input long enough to pool every head on a worker but not page by page (here 2 × 2 heads at 3,000
    tokens): the export's figure leaves that pooling on the lane as well, and the file holds the finished grid."""
    from attnviz.bench.on_demand_traces import on_demand_trace
    from attnviz.gui.views import all_heads_work
    from attnviz.gui.views.model_view import ModelView
    from attnviz.selection import Selection

    trace = on_demand_trace(3000, n_layers=2, n_heads=2, d_head=8)
    threads = []
    real = all_heads_work.pool_maps

    def pool_maps(*args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(all_heads_work, "pool_maps", pool_maps)
    view = ModelView(selection=Selection())
    qtbot.addWidget(view)
    view.set_trace(trace)
    qtbot.waitUntil(lambda: view.stats is not None, timeout=LONG)
    assert threads == [False]  # the screen's grid (the control: pooled on the lane as before)
    path = tmp_path / "grid.png"
    runner, seen = _export(view, path)
    qtbot.waitUntil(lambda: bool(seen["done"] or seen["failed"]), timeout=LONG)
    assert seen["failed"] == [] and path.exists()
    assert threads == [False, False], threads  # the export's figure: on the lane, not the GUI thread
    assert seen["texts"] and seen["texts"][0].startswith("computing heads 0/4 for the export"), seen["texts"]
