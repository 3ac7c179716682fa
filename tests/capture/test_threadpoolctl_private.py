"""threadpoolctl's private name (attnviz/threadpoolctl_private.py) at both ends of the supported versions: the
limit attnviz sets from a worker thread takes effect, at the installed threadpoolctl here and at the lowest
supported (3.1) in a subprocess; and the name is read nowhere else."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pytest

import attnviz
from attnviz.threadpoolctl_private import set_blas_threads
from tests.version_ends import run_at_lowest

threadpoolctl = pytest.importorskip("threadpoolctl")


def _numpy_blas():
    """threadpoolctl's controllers of NumPy's own BLAS (what attnviz.capture.blas_threads limits)."""
    np.ones((4, 4)) @ np.ones((4, 4))  # BLAS loaded
    libs = list(threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers)
    own = [lib for lib in libs if "numpy" in str(lib.filepath)] or libs
    if not own:
        pytest.skip("NumPy's BLAS is not one threadpoolctl controls")
    return own


def _from_another_thread(setter, lib, n: int) -> None:
    t = threading.Thread(target=setter, args=(lib, n))
    t.start()
    t.join(30)


def test_a_worker_thread_sets_the_limit():
    for lib in _numpy_blas():
        saved = lib.get_num_threads()
        try:
            lib.set_num_threads(2)  # this thread sets it first (newer releases: it now "controls" OpenBLAS)
            _from_another_thread(set_blas_threads, lib, 1)
            assert lib.get_num_threads() == 1
            _from_another_thread(set_blas_threads, lib, 2)
            assert lib.get_num_threads() == 2
        finally:
            set_blas_threads(lib, saved)


def test_the_public_method_is_what_the_private_name_works_around():
    """Negative control: where the private name exists, the public method called from another thread does
    nothing — so the test above would fail if attnviz called it (the fallback) instead."""
    guarded = [lib for lib in _numpy_blas() if hasattr(lib, "_real_set_num_threads")
               and getattr(lib, "threading_layer", "") != "openmp"]  # OpenMP limits are per thread: no guard
    if not guarded:
        pytest.skip(f"threadpoolctl {threadpoolctl.__version__} sets every limit directly: no guard to show")
    for lib in guarded:
        saved = lib.get_num_threads()
        try:
            lib.set_num_threads(2)
            _from_another_thread(lambda lib, n: lib.set_num_threads(n), lib, 1)
            assert lib.get_num_threads() == 2
        finally:
            set_blas_threads(lib, saved)


def test_the_name_is_read_nowhere_else():
    package = Path(attnviz.__file__).parent
    found = [f"{p.relative_to(package)}:{n}" for p in package.rglob("*.py") if p.name != "threadpoolctl_private.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"_real_set_num_threads", line.split("#", 1)[0])]
    assert found == []


def test_at_the_lowest_supported_version():
    run_at_lowest("threadpoolctl", "threadpoolctl", __file__)
