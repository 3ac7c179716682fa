"""How long the GUI event loop goes without running: the benchmark's freeze meter (Qt), and what the GUI
thread was doing during its longest freezes (a stack sampler), so a stall figure comes with its cause."""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import Counter

__all__ = ["StallMeter", "StackSampler"]


class StackSampler:
    """Samples one thread's Python stack from a helper thread while that thread is frozen.

    ``beat()`` (called by the watched thread whenever it runs) ends a freeze; the helper looks every
    ``every_ms`` and, once no beat came for ``after_ms``, records the watched thread's innermost frames.
    The ``keep`` longest freezes are kept with their most common stacks (:meth:`report`).

    Why Python frames are enough: a freeze inside Qt or a C library still shows the Python line that
    called into it. The helper needs the interpreter lock to take a sample, so a freeze that holds the
    lock in C (an import's ``dlopen``) shows as one long freeze with few samples, itself a clue.
    """

    def __init__(self, thread_id: int | None = None, after_ms: float = 40.0, every_ms: float = 5.0,
                 keep: int = 5, depth: int = 6):
        self.thread_id = thread_id if thread_id is not None else threading.get_ident()
        self.after_s, self.every_s, self.keep, self.depth = after_ms / 1000, every_ms / 1000, keep, depth
        self._last = time.perf_counter()
        self._samples: Counter = Counter()
        self._lock = threading.Lock()
        self.freezes: list[tuple[float, Counter]] = []  # (ms, stack → samples), longest first
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._last = time.perf_counter()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="stall-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def beat(self) -> None:
        """The watched thread ran: close the current freeze (kept if it is among the longest)."""
        now = time.perf_counter()
        with self._lock:
            gap_ms, samples = (now - self._last) * 1000, self._samples
            self._last, self._samples = now, Counter()
        if samples:
            self.freezes.append((gap_ms, samples))
            self.freezes.sort(key=lambda f: -f[0])
            del self.freezes[self.keep:]

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            if time.perf_counter() - self._last < self.after_s:
                continue
            frame = sys._current_frames().get(self.thread_id)
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)[-self.depth:]
            key = " < ".join(f"{f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})" for f in reversed(stack))
            with self._lock:
                self._samples[key] += 1

    def report(self, stacks: int = 3) -> list[dict]:
        """The longest freezes: ``{"ms": gap, "samples": n, "stacks": [(count, innermost-first stack)…]}``."""
        return [{"ms": round(ms, 1), "samples": sum(c.values()), "stacks": [(n, stack) for stack, n in c.most_common(stacks)]}
                for ms, c in self.freezes]


class StallMeter:
    """Measures how long the GUI event loop goes without running: a 10 ms timer records its gaps.

    ``max_gap_ms`` is the longest time between two ticks, i.e. the worst freeze a user would feel
    (minus the 10 ms period). Use as a context manager around the work to watch. With
    ``sample_stacks=True`` a :class:`StackSampler` also records what the GUI thread was doing during the
    longest gaps (``meter.sampler.report()``); it costs a helper thread that wakes every few ms.
    """

    def __init__(self, period_ms: int = 10, sample_stacks: bool = False):
        from PySide6.QtCore import QElapsedTimer, Qt, QTimer

        self.period_ms = period_ms
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self.gaps_ms: list[float] = []
        self.sampler = StackSampler(after_ms=period_ms + 30) if sample_stacks else None

    def _tick(self) -> None:
        self.gaps_ms.append(self._clock.nsecsElapsed() / 1e6)
        self._clock.restart()
        if self.sampler is not None:
            self.sampler.beat()

    def __enter__(self) -> "StallMeter":
        self.gaps_ms.clear()
        self._clock.start()
        self._timer.start()
        if self.sampler is not None:
            self.sampler.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.stop()
        self._tick()
        if self.sampler is not None:
            self.sampler.stop()

    @property
    def max_gap_ms(self) -> float:
        return max(self.gaps_ms, default=0.0)

    @property
    def ticks(self) -> int:
        return len(self.gaps_ms)
