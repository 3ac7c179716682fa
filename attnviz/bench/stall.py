"""How long the GUI event loop goes without running: the benchmark's freeze meter (Qt)."""

from __future__ import annotations

__all__ = ["StallMeter"]


class StallMeter:
    """Measures how long the GUI event loop goes without running: a 10 ms timer records its gaps.

    ``max_gap_ms`` is the longest time between two ticks, i.e. the worst freeze a user would feel
    (minus the 10 ms period). Use as a context manager around the work to watch.
    """

    def __init__(self, period_ms: int = 10):
        from PySide6.QtCore import QElapsedTimer, Qt, QTimer

        self.period_ms = period_ms
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self.gaps_ms: list[float] = []

    def _tick(self) -> None:
        self.gaps_ms.append(self._clock.nsecsElapsed() / 1e6)
        self._clock.restart()

    def __enter__(self) -> "StallMeter":
        self.gaps_ms.clear()
        self._clock.start()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.stop()
        self._tick()

    @property
    def max_gap_ms(self) -> float:
        return max(self.gaps_ms, default=0.0)

    @property
    def ticks(self) -> int:
        return len(self.gaps_ms)
