"""The one private threadpoolctl name attnviz uses, in one place, with its public fallback.

Supported: threadpoolctl 3.1 (the lower bound in pyproject.toml) to 3.8 (installed when this was written);
``tests/capture/test_threadpoolctl_private.py`` checks the name at both ends.

- ``OpenBLASController._real_set_num_threads``: newer threadpoolctl releases let only the first Python thread
  that limited OpenBLAS change it again; a call from any other thread does nothing, silently. attnviz computes
  attention blocks on worker threads and OpenBLAS's setting is the process's, so it sets the limit through the
  method behind that guard. Releases without the guard (3.1 has neither) set it directly through the public
  ``set_num_threads``, which is then the fallback. Other BLAS controllers have only the public method.
"""

from __future__ import annotations

__all__ = ["set_blas_threads"]


def set_blas_threads(lib, n: int) -> None:
    """Limit the BLAS of threadpoolctl controller ``lib`` to ``n`` threads, whichever thread calls."""
    getattr(lib, "_real_set_num_threads", lib.set_num_threads)(n)
