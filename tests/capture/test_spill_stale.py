"""Folders left by a killed process (attnviz.capture.spill.remove_stale): a child process makes a store and is
killed by SIGKILL (its finalizer never runs); the next store removes that folder, and never one without
attnviz's owner file, one of a process still running, or one holding files attnviz does not write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from attnviz.capture import spill

CHILD = """
import sys, numpy as np
from attnviz.capture.spill import SpillStore
s = SpillStore(budget=0, min_bytes=1, folder=sys.argv[1])
s.keep({"a": np.zeros(1000)})
print(s.folder, flush=True)
sys.stdin.read()  # alive until the test closes stdin or kills it
"""


def _child(parent):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(parent)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    folder = proc.stdout.readline().strip()
    assert folder and os.path.isdir(folder)
    return proc, folder


def _kill(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdin.close()
    proc.stdout.close()


@pytest.fixture
def killed(tmp_path):
    proc, folder = _child(tmp_path)
    _kill(proc)
    assert os.path.isdir(folder)  # nothing removed it: this is the leftover
    return folder, proc.pid


def _fake(parent, name: str, pid: int | None, mark=spill.OWNER_MARK, extra: str | None = None):
    folder = parent / (spill.FOLDER_PREFIX + name)
    folder.mkdir()
    (folder / "0.npy").write_bytes(b"x")
    if pid is not None:
        (folder / spill.OWNER_FILE).write_text(json.dumps({"attnviz": mark, "pid": pid}))
    if extra:
        (folder / extra).write_text("someone's notes")
    return folder


def test_a_killed_process_folder_is_removed_by_the_next_store(tmp_path, killed, monkeypatch):
    folder, _ = killed
    monkeypatch.setattr(spill, "_cleaned", False)
    store = spill.SpillStore(folder=str(tmp_path))
    assert not os.path.exists(folder)
    assert os.path.isdir(store.folder)  # the new store's own folder is made after the cleanup
    store.close()


def test_only_marked_folders_of_gone_processes_are_removed(tmp_path):
    live, live_folder = _child(tmp_path)  # first: each process's first store cleans up too
    gone, folder = _child(tmp_path)
    _kill(gone)
    dead = gone.pid
    assert os.path.isdir(live_folder) and os.path.isdir(folder)
    unmarked = _fake(tmp_path, "unmarked", None)
    other_mark = _fake(tmp_path, "othermark", dead, mark="something else")
    foreign_file = _fake(tmp_path, "foreign", dead, extra="notes.txt")
    mine = _fake(tmp_path, "mine", os.getpid())
    try:
        removed = spill.remove_stale(str(tmp_path))
        assert removed == [folder]
        for kept in (unmarked, other_mark, foreign_file, mine):
            assert kept.is_dir(), kept
        assert os.path.isdir(live_folder)  # a running process's folder stays
    finally:
        _kill(live)
    assert spill.remove_stale(str(tmp_path)) == [live_folder]  # once it is gone, it goes too


def test_a_closed_store_leaves_nothing_and_a_link_is_not_followed(tmp_path, killed):
    folder, _ = killed
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.rename(folder, target / "moved")
    os.symlink(target / "moved", tmp_path / (spill.FOLDER_PREFIX + "link"))
    assert spill.remove_stale(str(tmp_path)) == []
    assert (target / "moved" / spill.OWNER_FILE).is_file()
