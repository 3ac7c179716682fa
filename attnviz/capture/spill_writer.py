"""A background thread that writes a long capture's spilled arrays while the model computes (NumPy only).

Writing a layer's arrays to the trace's temporary folder (:mod:`attnviz.capture.spill`) took 2.9 s of the
compute thread at 4,096 tokens on a 30-layer, d 576 decoder: the forward waited for the disk. Jobs go to one
writer thread, in order; at most ``ahead`` bytes of arrays wait for it (:meth:`SpillWriter.put` blocks the
producer beyond that, so memory stays bounded: the arrays waiting are the only extra copies in memory). A
write that fails is kept and raised to the capture as :class:`~attnviz.errors.AttnvizError` at the next
:meth:`~SpillWriter.put` or at :meth:`~SpillWriter.flush`; the jobs after it are dropped (their arrays freed).
The thread ends whenever its queue is empty (a capture that fails midway leaves no thread behind) and starts
again with the next job.
"""

from __future__ import annotations

import collections
import threading
from typing import Callable

from attnviz.errors import AttnvizError

__all__ = ["SpillWriter", "WRITE_AHEAD", "write_failed"]

# bytes of arrays waiting to be written before the capture waits for the disk: a few arrays of a layer at
# 16,384 tokens (q or x: 36 MiB each on a d 576 model), small against the capture's 2 GB goal over the weights
WRITE_AHEAD = 1 << 27


def write_failed(folder: str, exc: BaseException) -> str:
    """The one-line message of a write to the trace's folder that failed."""
    return f"could not write the trace's arrays to {folder}: {exc}"


class SpillWriter:
    """One writer thread for one :class:`~attnviz.capture.spill.SpillStore`.

    Parameters
    ----------
    folder : the store's folder (named in the error message).
    ahead : bytes of jobs allowed to wait (one job larger than that is still taken when nothing waits).
    """

    def __init__(self, folder: str, ahead: int = WRITE_AHEAD):
        self.folder, self.ahead = folder, int(ahead)
        self._cond = threading.Condition()
        self._jobs: collections.deque = collections.deque()  # (bytes, job)
        self.pending = 0  # bytes of the jobs not yet done
        self.most_pending = 0  # the largest ``pending`` seen (what the bound allowed)
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def put(self, nbytes: int, job: Callable[[], None]) -> None:
        """Queue ``job`` (writing ``nbytes`` of arrays); waits while ``ahead`` bytes are waiting already.
        Raises AttnvizError when an earlier write failed."""
        with self._cond:
            while self.pending and self.pending + nbytes > self.ahead and self._error is None:
                self._cond.wait()
            self._raise()
            self._jobs.append((nbytes, job))
            self.pending += nbytes
            self.most_pending = max(self.most_pending, self.pending)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="attnviz-spill-writer", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self) -> None:
        """Wait until every queued job is done; raises AttnvizError when one failed."""
        with self._cond:
            while self._jobs:
                self._cond.wait()
            self._raise()

    def _raise(self) -> None:
        if isinstance(self._error, AttnvizError):
            raise self._error
        if self._error is not None:
            raise AttnvizError(write_failed(self.folder, self._error)) from self._error

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._jobs:
                    self._thread = None  # the next put starts a new thread
                    return
                nbytes, job = self._jobs[0]
                failed = self._error is not None
            try:
                if not failed:  # after a failure the rest are dropped: the capture stops at its next put
                    job()
            except BaseException as exc:  # noqa: BLE001 - handed to the capture's thread, raised there
                with self._cond:
                    self._error = self._error or exc
            finally:
                del job
                with self._cond:
                    self._jobs.popleft()
                    self.pending -= nbytes
                    self._cond.notify_all()
