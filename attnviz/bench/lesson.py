"""Benchmark of ``attnviz lesson check``: every claim of a lesson measured on n held-out inputs.

The figures are wall and CPU seconds for the whole lesson (models loaded once, as the command does)
and per scene, with the load average beside them: this shared machine's wall time is noisy.
Run ``python -m attnviz.bench.lesson [LESSON] [N]``.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["measure_lesson_check"]


def measure_lesson_check(lesson: str = "attention", n: int = 200) -> dict:
    """Measure every claim of ``lesson`` as ``attnviz lesson check`` does; seconds (wall and CPU)."""
    from attnviz.lessons.claims import Workbench, evaluate_claim
    from attnviz.lessons.lesson import load_lesson

    loaded = load_lesson(lesson)
    bench = Workbench()
    figures: dict = {"lesson": loaded.name, "n": n, "scenes": len(loaded.scenes)}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t0, c0 = time.perf_counter(), time.process_time()
    held = 0
    for i, scene in enumerate(loaded.scenes, 1):
        if not scene.claim:
            continue
        t, c = time.perf_counter(), time.process_time()
        held += evaluate_claim(scene, bench, n=n).ok
        figures[f"scene {i:02d} {scene.claim['kind']} s (cpu s)"] = \
            f"{time.perf_counter() - t:.2f} ({time.process_time() - c:.2f})"
    figures.update({"total_seconds": time.perf_counter() - t0, "total_cpu_seconds": time.process_time() - c0,
                    "claims_holding": held, "load_average_at_start": load})
    return figures


if __name__ == "__main__":
    args = sys.argv[1:]
    for key, value in measure_lesson_check(args[0] if args else "attention", int(args[1]) if len(args) > 1 else 200).items():
        print(f"{key:<40} {value:.4g}" if isinstance(value, float) else f"{key:<40} {value}")
