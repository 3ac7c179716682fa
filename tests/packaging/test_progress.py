"""The progress helper: a live line on a terminal, nothing when piped."""

from __future__ import annotations

import io
import time

from attnviz.commands.progress import Progress, progress_enabled, status


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PROGRESS", raising=False)
    pipe = io.StringIO()
    assert not progress_enabled(pipe)
    with Progress(3, "figures", stream=pipe) as bar:
        for _ in range(3):
            bar.advance()
    with status("loading", stream=pipe):
        pass
    assert pipe.getvalue() == ""


def test_a_bar_on_a_terminal_counts_and_erases_itself(monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PROGRESS", raising=False)
    tty = _Tty()
    assert progress_enabled(tty)
    with Progress(4, "figures", stream=tty) as bar:
        for name in "abcd":
            bar.advance(note=name)
        assert bar.done == 4 and "[" + "#" * 24 + "] 4/4" in bar.text()
    out = tty.getvalue()
    assert "figures [------------------------] 0/4" in out  # drawn at once
    assert "4/4" in out  # the last step is always drawn, however fast
    assert out.endswith("\r")  # erased: the next output starts on a clean line
    last = out.rstrip("\r").split("\r")[-1]
    assert last.strip() == ""


def test_update_sets_count_and_total_as_a_callback():
    bar = Progress(0, "pack", stream=_Tty())
    bar.update(2, 8, "steps")
    assert (bar.done, bar.total, bar.note) == (2, 8, "steps")
    assert "[######------------------] 2/8" in bar.text()
    bar.update(50)  # never past the total
    assert bar.done == 8


def test_environment_forces_on_or_off(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_PROGRESS", "1")
    assert progress_enabled(io.StringIO())
    monkeypatch.setenv("ATTNVIZ_PROGRESS", "0")
    assert not progress_enabled(_Tty())


def test_status_spins_while_the_body_runs_and_clears(monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PROGRESS", raising=False)
    tty = _Tty()
    with status("loading coref", stream=tty):
        deadline = time.monotonic() + 5
        while "loading coref…" not in tty.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)  # the spinner thread draws on its own
    out = tty.getvalue()
    assert "loading coref… " in out and out.endswith("\r")
