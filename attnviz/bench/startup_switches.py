"""``attnviz bench --only startup``: what each start-up mechanism buys, as on/off pairs measured in one run.

Every mechanism of :mod:`attnviz.gui.startup` can be switched off (``ATTNVIZ_STARTUP_<NAME>=0``). For each one
this launches the app ``repeat`` times in pairs, all on and that one off back to back (which goes first
alternates), the pairs of all mechanisms interleaved round after round. It prints the medians and ranges of
the first map, the start-up stall, the stall until the live model's map and the live map with all on and
with each one off, and each mechanism's gain: the median of its pairs' differences (off − on). A shared
machine's load drifts within minutes; a pair's two launches are seconds apart, so the differences are what
to compare, not the absolute figures. The 1-minute load average before each launch is printed beside them.
"""

from __future__ import annotations

import os
import statistics
import tempfile

from attnviz.bench.startup import measure_startup

__all__ = ["measure_startup_switches", "FIGURES"]

# figure key in measure_startup's result → (label, scale to the printed unit, unit)
FIGURES = {"first_attention_s": ("first map", 1000.0, "ms"),
           "startup_max_stall_ms": ("start-up stall", 1.0, "ms"),
           "startup_to_live_max_stall_ms": ("stall until live", 1.0, "ms"),
           "live_attention_s": ("live map", 1000.0, "ms"),
           # CPU time, all threads, by the first map / GUI thread's in the longest start-up stall: barely
           # moved by other jobs on the machine, unlike the wall-clock figures
           "first_attention_cpu_s": ("first map CPU", 1000.0, "ms"),
           "startup_max_stall_cpu_ms": ("start-up stall CPU", 1.0, "ms")}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def measure_startup_switches(repeat: int = 5, mechanisms: tuple[str, ...] | None = None,
                             model: str | None = None, progress=None, timeout: float = 300.0) -> dict:
    """Per mechanism, ``repeat`` pairs of launches: all on, then that one off (or the reverse: the order
    alternates from pair to pair), the pairs of all mechanisms interleaved round by round.

    Returns a dict of printable figures: the medians (ranges) of :data:`FIGURES` in ms with all on (every
    pair's "on" launch) and with each mechanism off, and per mechanism ``"<name> gain ..."``: the median of
    the pairs' differences, off − on (positive: the mechanism helps), with their range.
    """
    from attnviz.gui.startup.switches import MECHANISMS, env_name

    names = tuple(mechanisms) if mechanisms is not None else tuple(MECHANISMS)
    repeat = max(1, int(repeat))
    on: list[dict] = []
    pairs: dict[str, list[tuple[dict, dict]]] = {n: [] for n in names}
    loads: list[float] = []

    def launch(env: dict) -> dict:
        loads.append(os.getloadavg()[0])
        return measure_startup(model=model, cache_dir=cache, extra_env=env, timeout=timeout)

    with tempfile.TemporaryDirectory(prefix="attnviz-bench-cache-") as cache:
        # a first launch writes the import plans the others read
        measure_startup(model=model, cache_dir=cache, timeout=timeout)
        for round_ in range(repeat):
            for i in range(len(names)):
                name = names[(i + round_) % len(names)]
                # "a+b": both off in one configuration
                off_env = {env_name(x): "0" for x in name.split("+")}
                if (round_ + i) % 2 == 0:
                    base, off = launch({}), launch(off_env)
                else:
                    off, base = launch(off_env), launch({})
                on.append(base)
                pairs[name].append((base, off))
                if progress is not None:
                    progress(f"round {round_ + 1}/{repeat}: {name} on/off")
    out: dict = {"launch pairs per mechanism": repeat,
                 "load 1 min before each launch, median (range)": f"{statistics.median(loads):.1f} "
                                                                  f"({min(loads):.1f}-{max(loads):.1f}) on "
                                                                  f"{os.cpu_count()} cores"}

    def figures(label: str, runs: list[dict]) -> None:
        for key, (fig, scale, unit) in FIGURES.items():
            values = [r[key] * scale for r in runs if key in r]
            if values:
                out[f"{label}: {fig} {unit}, median (range)"] = _spread(values)

    figures("all on", on)
    for name in names:
        figures(f"{name} off", [off for _, off in pairs[name]])
        gains = []
        for key, (fig, scale, _unit) in FIGURES.items():
            diffs = [(off[key] - base[key]) * scale for base, off in pairs[name] if key in off and key in base]
            if diffs:
                gains.append(f"{fig} {statistics.median(diffs):+.0f} ({min(diffs):+.0f}..{max(diffs):+.0f})")
        out[f"{name} gain: off - on per pair, median (range), ms"] = "; ".join(gains)
    out["goals"] = "first map <= 1000 ms, start-up stall <= 100 ms, stall until live <= 100 ms (all on)"
    return out
