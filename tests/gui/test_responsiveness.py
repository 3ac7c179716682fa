"""The GUI thread only queues heavy work: loading, model runs and training run on a worker thread.

Behaviour, not timing: each job records ``threading.get_ident()`` and the tests compare it with the
GUI thread's; a job is held on an event so the tests see the GUI thread return (and keep serving
events) while the work is still running; results that a newer request superseded are never shown;
cancelling a training run stops it between steps. How long the event loop may stall is a figure of
``attnviz bench`` (``StallMeter``), never an assertion here.
"""

from __future__ import annotations

import threading

import attnviz.gui.window.runs as window_runs_module
import attnviz.gui.window.model_loading as window_models_module
from attnviz.gui.panels import model_jobs


def _recording(fn, idents: list, gate: threading.Event | None = None):
    """``fn`` that notes the thread it runs on and, with a ``gate``, waits for it first."""

    def wrapped(*args, **kwargs):
        idents.append(threading.get_ident())
        if gate is not None:
            assert gate.wait(60), "the test never released the job"
        return fn(*args, **kwargs)

    return wrapped


def test_loading_and_running_a_model_happen_on_a_worker(make_window, qtbot, monkeypatch):
    gui_thread = threading.get_ident()
    loads, runs, gate = [], [], threading.Event()
    # the window loads models in its model-loading component (gui/window/model_loading.py) and runs inputs in gui/window/runs.py
    monkeypatch.setattr(window_models_module, "load_model_job", _recording(model_jobs.load_model_job, loads, gate))
    monkeypatch.setattr(window_runs_module, "run_input_job", _recording(model_jobs.run_input_job, runs))
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    win.start()
    # the load is held on the gate: the GUI thread got control back with the work still in flight
    qtbot.waitUntil(lambda: len(loads) == 1, timeout=60000)
    assert win.lane.busy and win.loaded is None
    ticks = []
    qtbot.waitUntil(lambda: ticks.append(1) or len(ticks) > 3, timeout=10000)  # the event loop runs meanwhile
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        gate.set()
    assert win.loaded is not None and win.trace is not None
    assert loads and runs and gui_thread not in set(loads) | set(runs)


def test_a_superseded_run_is_never_shown(make_window, qtbot, monkeypatch):
    runs, gate = [], threading.Event()
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and not win.lane.busy, timeout=60000)
    monkeypatch.setattr(window_runs_module, "run_input_job", _recording(model_jobs.run_input_job, runs, gate))
    shown = []
    win.trace_shown.connect(lambda *a: shown.append(" ".join(win.trace.tokens)))
    win.run_text("the dog sat")  # starts and is held on the gate
    qtbot.waitUntil(lambda: len(runs) == 1, timeout=30000)
    win.run_text("the cat ran")  # waits, then is replaced by the next one: never runs
    win.run_text("the mat sat")
    gate.set()
    qtbot.waitUntil(lambda: not win.lane.busy, timeout=60000)
    assert len(runs) == 2  # the running one and the newest; the one in between was dropped unrun
    assert len(shown) == 1 and "mat" in shown[0] and "dog" not in shown[0]
    assert win.lane.stale == 1  # the held run's result arrived and was dropped


def test_a_new_model_drops_runs_for_the_old_one(make_window, qtbot, monkeypatch):
    runs, gate = [], threading.Event()
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.trace is not None and not win.lane.busy, timeout=60000)
    monkeypatch.setattr(window_runs_module, "run_input_job", _recording(model_jobs.run_input_job, runs, gate))
    old = win.loaded
    win.run_text("the dog sat")  # held
    qtbot.waitUntil(lambda: len(runs) == 1, timeout=30000)
    win.load_model("tiny-decoder")
    gate.set()
    qtbot.waitUntil(lambda: win.loaded is not old and not win.lane.busy, timeout=60000)
    assert win.trace is not None and win.trace.kind == "decoder"  # the old model's run never reached the views


def test_training_runs_on_a_worker_and_cancel_stops_it_between_steps(make_window, qtbot, tmp_path, monkeypatch):
    import attnviz.training.loop as loop

    gui_thread = threading.get_ident()
    real_train, idents, first_step = loop.train, [], threading.Event()

    def train(*args, cancel=None, **kwargs):
        for ev in real_train(*args, cancel=cancel, **kwargs):
            idents.append(threading.get_ident())
            if not first_step.is_set():
                first_step.set()
                while not cancel():  # hold the run until the GUI thread has asked it to stop
                    threading.Event().wait(0.01)
            yield ev

    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.training is not None, timeout=90000)
    panel = win.training
    panel.task_box.setCurrentText("coref")
    qtbot.waitUntil(lambda: panel._defaults.get("name") == "coref", timeout=60000)
    panel.steps_box.setValue(50)
    panel.batch_box.setValue(8)
    panel.out_edit.setText(str(tmp_path / "run"))
    monkeypatch.setattr(loop, "train", train)
    with qtbot.waitSignal(panel.finished, timeout=120000) as got:
        panel.start()
        assert panel.running  # the GUI thread only queued it
        qtbot.waitUntil(first_step.is_set, timeout=60000)
        panel.cancel()
    final = got.args[0]
    assert final is not None and final.step < 50 and "cancelled" in final.message
    assert idents and gui_thread not in set(idents)
    qtbot.waitUntil(lambda: not panel.running, timeout=10000)
