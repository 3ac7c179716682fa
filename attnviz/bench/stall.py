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
    called into it; so does a thread waiting for the interpreter lock (a C++ event loop about to call a
    Python slot shows only the ``exec`` line). To tell these apart each freeze also records what the other
    threads were running (``others``) and how late the helper itself woke (``late_ms``): the helper needs
    the lock to take a sample, so a freeze while another thread holds the lock in C (an import's
    ``dlopen``, an extension's initialisation) shows few samples and a large ``late_ms``.
    """

    def __init__(self, thread_id: int | None = None, after_ms: float = 40.0, every_ms: float = 5.0,
                 keep: int = 5, depth: int = 6):
        self.thread_id = thread_id if thread_id is not None else threading.get_ident()
        self.after_s, self.every_s, self.keep, self.depth = after_ms / 1000, every_ms / 1000, keep, depth
        self._last = time.perf_counter()
        self._samples: Counter = Counter()
        self._others: Counter = Counter()
        self._late_ms = 0.0
        self._lock = threading.Lock()
        self._t0 = self._last
        self._cpu = time.thread_time()  # the watched thread's CPU time at its last beat (beat runs on it)
        # (ms, stack → samples, other threads' frames → samples, helper's worst lateness ms, start s), longest first
        self.freezes: list[tuple] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._last = self._t0 = time.perf_counter()
        self._cpu = time.thread_time()
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
        now, cpu = time.perf_counter(), time.thread_time()
        with self._lock:
            start, samples, others, late = self._last, self._samples, self._others, self._late_ms
            self._last, self._samples, self._others, self._late_ms = now, Counter(), Counter(), 0.0
        cpu_ms, self._cpu = (cpu - self._cpu) * 1000, cpu
        if samples or late:
            self.freezes.append(((now - start) * 1000, samples, others, late, start - self._t0, cpu_ms))
            self.freezes.sort(key=lambda f: -f[0])
            del self.freezes[self.keep:]

    @staticmethod
    def _describe(frame, depth: int) -> str:
        stack = traceback.extract_stack(frame)[-depth:]
        return " < ".join(f"{f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})" for f in reversed(stack))

    def _run(self) -> None:
        me = threading.get_ident()
        names = {}
        due = time.perf_counter() + self.every_s
        while not self._stop.wait(max(0.0, due - time.perf_counter())):
            now = time.perf_counter()
            late_ms, due = (now - due) * 1000, now + self.every_s
            if now - self._last < self.after_s:
                continue
            frames = sys._current_frames()
            frame = frames.get(self.thread_id)
            if frame is None:
                continue
            key = self._describe(frame, self.depth)
            others = []
            for ident, other in frames.items():
                if ident not in (me, self.thread_id):
                    if ident not in names:
                        names = {t.ident: t.name for t in threading.enumerate()}
                    others.append(f"{names.get(ident, ident)}: {self._describe(other, 3)}")
            with self._lock:
                self._samples[key] += 1
                self._others.update(others)
                self._late_ms = max(self._late_ms, late_ms)

    def report(self, stacks: int = 3) -> list[dict]:
        """The longest freezes, each ``{"ms": gap, "at_s": its start (s after start()), "samples": n,
        "stacks": [(count, innermost-first stack)…], "others": [(count, "thread: stack")…],
        "late_ms": the helper's worst lateness, "cpu_ms": the CPU time the watched thread used in it}``.
        A ``cpu_ms`` well below ``ms`` means it mostly waited (for the interpreter lock, a lock in C, or
        a core on a busy machine) rather than worked."""
        return [{"ms": round(ms, 1), "at_s": round(at, 3), "samples": sum(c.values()),
                 "stacks": [(n, stack) for stack, n in c.most_common(stacks)],
                 "others": [(n, stack) for stack, n in o.most_common(stacks)], "late_ms": round(late, 1),
                 "cpu_ms": round(cpu, 1)}
                for ms, c, o, late, at, cpu in self.freezes]


class StallMeter:
    """Measures how long the GUI event loop goes without running: a 10 ms timer records its gaps.

    ``max_gap_ms`` is the longest time between two ticks, i.e. the worst freeze a user would feel
    (minus the 10 ms period). ``max_cpu_gap_ms`` is the most CPU time the GUI thread used between two
    ticks: the work done in one go, which on a busy shared machine is steadier than the wall figure
    (that one also holds waiting for a core or for the interpreter lock). Use as a context manager around the work to watch. With
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
        self.cpu_gaps_ms: list[float] = []
        self._cpu = 0.0
        self.sampler = StackSampler(after_ms=period_ms + 30) if sample_stacks else None

    def _tick(self) -> None:
        self.gaps_ms.append(self._clock.nsecsElapsed() / 1e6)
        self._clock.restart()
        cpu = time.thread_time()  # the ticks run on the GUI thread: its own CPU time
        self.cpu_gaps_ms.append((cpu - self._cpu) * 1000)
        self._cpu = cpu
        if self.sampler is not None:
            self.sampler.beat()

    def __enter__(self) -> "StallMeter":
        self.gaps_ms.clear()
        self.cpu_gaps_ms.clear()
        self._cpu = time.thread_time()
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

    def open_cpu_gap_ms(self) -> float:
        """The GUI thread's CPU time since the last tick (call it on the GUI thread)."""
        return (time.thread_time() - self._cpu) * 1000

    @property
    def max_cpu_gap_ms(self) -> float:
        return max(self.cpu_gaps_ms, default=0.0)

    @property
    def ticks(self) -> int:
        return len(self.gaps_ms)
