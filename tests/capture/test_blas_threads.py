"""one_blas_thread: BLAS runs on one thread inside, the process's setting comes back after (nested, threaded)."""

import threading

import numpy as np
import pytest

from attnviz.capture.blas_threads import one_blas_thread

threadpoolctl = pytest.importorskip("threadpoolctl")


def _threads() -> list[int]:
    """Threads of NumPy's BLAS (another package's BLAS, loaded by other tests, is not the one limited)."""
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    own = [i for i in blas if "numpy" in i["filepath"]] or blas
    return [i["num_threads"] for i in own]


def test_one_thread_inside_and_the_setting_restored_after():
    np.ones((4, 4)) @ np.ones((4, 4))  # BLAS loaded
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _threads()
        assert before and all(n == 2 for n in before)  # the control: two threads outside
        with one_blas_thread():
            assert all(n == 1 for n in _threads())
            with one_blas_thread():  # nested: still one, and the inner exit does not restore early
                pass
            assert all(n == 1 for n in _threads())
        assert _threads() == before


def test_overlapping_threads_restore_once_the_last_leaves():
    np.ones((4, 4)) @ np.ones((4, 4))
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _threads()
        entered, release = threading.Event(), threading.Event()

        def other():
            with one_blas_thread():
                entered.set()
                release.wait(10)

        t = threading.Thread(target=other)
        t.start()
        entered.wait(10)
        with one_blas_thread():
            pass
        assert all(n == 1 for n in _threads())  # the other thread is still inside
        release.set()
        t.join(10)
        assert _threads() == before
