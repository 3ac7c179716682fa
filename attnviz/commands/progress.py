"""Progress of long command-line jobs: a live line on a terminal, nothing when piped.

Qt-free and torch-free. Two shapes:

- :class:`Progress` — a bar for a job of known length (lecture pack figures, heads, batches)::

      with Progress(len(items), "figures") as bar:
          for item in items:
              work(item)
              bar.advance(note=item.name)

  ``bar.update(done, total, note)`` sets the count instead, and doubles as a callback for library
  loops that report ``(done, total, note)`` (``export_lecture_pack(..., progress=bar.update)``).

- :func:`status` — an indeterminate line with the elapsed time, redrawn by a small thread, for a
  single call that reports nothing while it runs (loading a model, ``task.evaluate``)::

      with status("loading coref"):
          loaded = load_model("coref")

Both draw on standard error only when it is a terminal (``ATTNVIZ_PROGRESS=1`` forces them on,
``0`` off), erase their line when done, and log the job's duration at INFO level (``--verbose``
shows it; the log file keeps it).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["Progress", "status", "progress_enabled"]

log = logging.getLogger("attnviz.progress")

REDRAW_S = 0.1  # at most ten redraws a second: a terminal is slow, and the job is what matters
BAR_WIDTH = 24
SPINNER = "|/-\\"


def progress_enabled(stream=None) -> bool:
    """Whether live progress lines are drawn on ``stream`` (standard error by default)."""
    forced = os.environ.get("ATTNVIZ_PROGRESS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


class _Line:
    """One redrawable line on a stream (``\\r`` + text + padding over what was there)."""

    def __init__(self, stream, enabled: bool):
        self.stream, self.enabled, self._width = stream, enabled, 0
        self._lock = threading.Lock()

    def draw(self, text: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            pad = max(0, self._width - len(text))
            self._write("\r" + text + " " * pad)
            self._width = len(text)

    def clear(self) -> None:
        if not self.enabled or not self._width:
            return
        with self._lock:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the job goes on without its bar
            self.enabled = False


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class Progress:
    """A bar for ``total`` steps of a job, drawn on a terminal's standard error.

    Parameters
    ----------
    total : number of steps (``advance`` is called once per step, or with ``n``).
    label : what is counted or done, e.g. ``"figures"`` or ``"heads of layer 3"``.
    stream : where to draw (default: standard error at the time of the call).
    enabled : draw or not (default: :func:`progress_enabled`).
    """

    def __init__(self, total: int, label: str, stream=None, enabled: bool | None = None):
        self.total, self.label, self.done = max(0, int(total)), label, 0
        stream = sys.stderr if stream is None else stream
        self._line = _Line(stream, progress_enabled(stream) if enabled is None else enabled)
        self._t0 = time.monotonic()
        self._last = -1.0
        self.note = ""

    @property
    def enabled(self) -> bool:
        return self._line.enabled

    def text(self) -> str:
        """The line as drawn now: ``label [#####-----] 3/10 0:04 note``."""
        frac = self.done / self.total if self.total else 0.0
        filled = int(round(BAR_WIDTH * min(frac, 1.0)))
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        text = f"{self.label} [{bar}] {self.done}/{self.total} {_elapsed(time.monotonic() - self._t0)}"
        return f"{text} {self.note}" if self.note else text

    def advance(self, n: int = 1, note: str | None = None) -> None:
        """Count ``n`` more steps done (and show ``note``, e.g. the name of the next item)."""
        self.update(self.done + n, note=note)

    def update(self, done: int, total: int | None = None, note: str | None = None) -> None:
        """Set the count (and the total, for jobs that learn it late); a callback for ``(done, total, note)``."""
        if total is not None:
            self.total = max(0, int(total))
        self.done = min(self.total, int(done)) if self.total else int(done)
        if note is not None:
            self.note = note
        now = time.monotonic()
        if now - self._last >= REDRAW_S or self.done >= self.total:
            self._last = now
            self._line.draw(self.text())

    def close(self) -> None:
        """Erase the line and log how long the job took."""
        self._line.clear()
        log.info("%s: %d/%d in %.1f s", self.label, self.done, self.total, time.monotonic() - self._t0)

    def __enter__(self) -> Progress:
        self._line.draw(self.text())
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def status(label: str, stream=None, enabled: bool | None = None):
    """Show ``label… | 0:03`` with a turning spinner while the body runs (a terminal only).

    The body runs on the calling thread; a daemon thread redraws the line. Yields nothing.
    """
    stream = sys.stderr if stream is None else stream
    line = _Line(stream, progress_enabled(stream) if enabled is None else enabled)
    t0 = time.monotonic()
    stop = threading.Event()

    def frame(i: int) -> None:
        line.draw(f"{label}… {SPINNER[i % len(SPINNER)]} {_elapsed(time.monotonic() - t0)}")

    def spin() -> None:
        i = 1
        while not stop.wait(REDRAW_S):
            frame(i)
            i += 1

    thread = threading.Thread(target=spin, name="attnviz-status", daemon=True) if line.enabled else None
    log.debug("%s…", label)
    if thread is not None:
        frame(0)  # at once: a quick job still shows what it did
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join()
        line.clear()
        log.info("%s: %.1f s", label, time.monotonic() - t0)
