"""Start-up work begun at launch on a plain thread, taken by the job that needs it."""

from __future__ import annotations

import threading

import pytest

from attnviz.gui.startup.prefetch import prefetch, prefetched


def test_a_prefetch_runs_on_another_thread_and_its_result_is_taken_once():
    ran_on = []

    def job(x):
        ran_on.append(threading.get_ident())
        return x * 2

    prefetch("h3-test", job, 21)
    prefetch("h3-test", job, 99)  # started already: ignored
    assert prefetched("h3-test", job, 5) == 42
    assert ran_on[0] != threading.get_ident()
    assert prefetched("h3-test", job, 5) == 10  # taken: the job runs here now
    assert ran_on[-1] == threading.get_ident() and len(ran_on) == 2


def test_without_a_prefetch_the_job_runs_here_and_errors_reach_the_taker():
    assert prefetched("h3-none", lambda: "here") == "here"

    def broken():
        raise ValueError("no plan")

    prefetch("h3-broken", broken)
    with pytest.raises(ValueError, match="no plan"):
        prefetched("h3-broken", broken)
