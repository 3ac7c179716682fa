"""One BLAS thread while a block of attention is computed (NumPy's BLAS, through threadpoolctl when installed).

Why: a block's matrix products are small (a 512 × 512 tile is 64 products of 64 rows), and a multi-threaded
product waits for its slowest thread. On a machine with other work running, that wait dominates: a
64 × 512 × 64 float32 product took 36 ms wall with NumPy's two OpenBLAS threads at load 8 on 2 cores and
0.7 ms on one thread. Blocks are already computed on worker threads beside the GUI thread, so one BLAS
thread each is also what shares the cores fairly. Without threadpoolctl this is a no-op (same results).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from attnviz.threadpoolctl_private import set_blas_threads

__all__ = ["one_blas_thread"]

_lock = threading.Lock()
_state = {"depth": 0, "saved": None, "libs": None}


def _libs() -> list:
    """threadpoolctl's controllers of NumPy's BLAS ([] when threadpoolctl is not installed)."""
    if _state["libs"] is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _state["libs"] = []
        else:
            libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
            # NumPy's own (its wheels bundle one): a BLAS loaded later by another package is not ours to limit
            own = [lib for lib in libs if "numpy" in str(getattr(lib, "filepath", ""))]
            _state["libs"] = own or libs
    return _state["libs"]


@contextmanager
def one_blas_thread():
    """Limit BLAS to one thread inside the block; re-entrant and shared by threads (the limit is the
    process's: the first to enter sets it, the last to leave restores what was there)."""
    with _lock:
        if _state["depth"] == 0:
            libs = _libs()
            _state["saved"] = [lib.get_num_threads() for lib in libs]
            for lib in libs:
                set_blas_threads(lib, 1)
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                for lib, n in zip(_libs(), _state["saved"] or []):
                    if n is not None:
                        set_blas_threads(lib, n)
