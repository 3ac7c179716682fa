"""Workers: results arrive on the GUI thread, stale runs are dropped, errors become one-line messages."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QObject, QThread

from attnviz.errors import InputError
from attnviz.gui.workers import ALL, Lane, ModelLane, cancel_requested, describe_error, run_job


class Recorder(QObject):
    """A GUI-thread receiver that notes what arrived and on which thread."""

    def __init__(self):
        super().__init__()
        self.got: list = []
        self.threads: set = set()

    def lane_result(self, kind, value):
        self.threads.add(QThread.currentThread())
        self.got.append((kind, value))

    def lane_error(self, kind, message):
        self.threads.add(QThread.currentThread())
        self.got.append((kind, "error: " + message))

    def result(self, value):
        self.threads.add(QThread.currentThread())
        self.got.append(value)


def _slow(value, delay=0.15):
    time.sleep(delay)
    return value, threading.current_thread() is threading.main_thread()


def test_newest_request_wins_and_results_arrive_on_the_gui_thread(qapp, qtbot):
    lane, rec = ModelLane(), Recorder()
    lane.result.connect(rec.lane_result)
    lane.error.connect(rec.lane_error)
    for i in range(6):  # typing fast: one run in flight, the others replace each other while waiting
        lane.submit("trace", _slow, f"text {i}")
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    values = [v for _kind, (v, _on_main) in rec.got]
    assert values[-1] == "text 5"  # the newest text is always shown
    assert len(values) <= 2  # at most the one already running, then the newest
    assert not any(on_main for _kind, (_v, on_main) in rec.got)  # the work ran on a worker thread
    assert rec.threads == {qapp.thread()}  # the results were delivered on the GUI thread


def test_a_load_drops_waiting_runs_of_the_old_model(qapp, qtbot):
    lane, rec = ModelLane(), Recorder()
    lane.result.connect(rec.lane_result)
    lane.submit("trace", _slow, "running")
    lane.submit("trace", _slow, "waiting, for the old model")
    lane.submit("load", _slow, "new model", supersedes=("trace",))
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    # the waiting run never starts; the running one was superseded by it, so its result is stale too
    assert [(k, v) for k, (v, _m) in rec.got] == [("load", "new model")] and lane.stale == 1


def test_a_stale_result_is_not_delivered(qapp, qtbot):
    lane, rec = ModelLane(), Recorder()
    lane.result.connect(rec.lane_result)
    lane.submit("trace", _slow, "old", 0.3)
    qtbot.wait(50)  # "old" is running now
    lane.submit("trace", _slow, "new", 0.0)
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    assert [v for _k, (v, _m) in rec.got] == ["new"] and lane.stale == 1


def test_errors_are_messages_not_tracebacks(qapp, qtbot):
    lane, rec = ModelLane(), Recorder()
    lane.error.connect(rec.lane_error)

    def bad_input():
        raise InputError("the text is empty: type a sentence")

    def bug():
        return {}["missing"]

    lane.submit("trace", bad_input)
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    lane.submit("trace", bug)
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    assert rec.got[0] == ("trace", "error: the text is empty: type a sentence")
    assert rec.got[1][1].startswith("error: unexpected error (KeyError)") and "Traceback" not in rec.got[1][1]


def test_run_job_delivers_on_the_gui_thread(qapp, qtbot):
    rec = Recorder()
    for i in range(4):
        run_job(_slow, i, 0.05, on_result=rec.result)
    qtbot.waitUntil(lambda: len(rec.got) == 4, timeout=10000)
    assert sorted(v for v, _m in rec.got) == [0, 1, 2, 3]
    assert rec.threads == {qapp.thread()}


@pytest.mark.parametrize("exc, text", [(MemoryError(), "out of memory"), (InputError("bad image"), "bad image")])
def test_describe_error(exc, text):
    assert describe_error(exc).startswith(text)


def test_cancel_drops_waiting_jobs_and_running_results_and_asks_the_job_to_stop(qapp, qtbot):
    lane, rec = Lane(), Recorder()
    lane.result.connect(rec.lane_result)
    started, saw_cancel = threading.Event(), []

    def polls():
        started.set()
        while not cancel_requested():  # a job that checks between its steps
            time.sleep(0.005)
        saw_cancel.append(True)
        return "stopped"

    lane.submit("a", polls)
    lane.submit("b", _slow, "never started")
    assert started.wait(10)
    lane.cancel(ALL)
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    assert saw_cancel == [True] and rec.got == [] and lane.stale == 1


def test_a_generator_job_streams_its_items_and_returns_its_value(qapp, qtbot):
    lane, rec = Lane(torch=False), Recorder()
    items, threads = [], set()

    def steps(n):
        for i in range(n):
            threads.add(threading.get_ident())
            yield i
        return "done"

    lane.submit("train", steps, 5, on_progress=items.append, on_result=rec.result)
    qtbot.waitUntil(lambda: bool(rec.got), timeout=10000)
    assert items == [0, 1, 2, 3, 4] and rec.got == ["done"]
    assert threading.get_ident() not in threads  # it ran on a worker


def test_nothing_is_delivered_to_a_deleted_owner(qapp, qtbot):
    import shiboken6

    lane, owner, got = Lane(torch=False), QObject(), []
    lane.submit("x", _slow, "late", 0.1, on_result=got.append, owner=owner)
    shiboken6.delete(owner)
    qtbot.waitUntil(lambda: not lane.busy, timeout=10000)
    assert got == [] and lane.stale == 1
