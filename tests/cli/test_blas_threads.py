"""The app's entry point keeps numpy's BLAS to one thread (small products spun two threads on busy cores)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _blas_threads(env: dict) -> int:
    code = ("import attnviz.cli, numpy, threadpoolctl; "
            "print(max(i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_the_app_runs_numpy_products_on_one_thread_unless_told_otherwise():
    pytest.importorskip("threadpoolctl")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _blas_threads(env) == 1
    if (os.cpu_count() or 1) > 1:  # the user's own setting wins
        assert _blas_threads({**env, "OPENBLAS_NUM_THREADS": "2"}) == 2
