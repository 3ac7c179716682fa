"""``attnviz bench --only startup``: what each start-up mechanism buys, as on/off pairs measured in one run.

Every mechanism of :mod:`attnviz.gui.startup` can be switched off (``ATTNVIZ_STARTUP_<NAME>=0``). This launches
the app ``repeat`` times with all of them on and ``repeat`` times with each one off, interleaved (round after
round, the order rotated each round, so a machine that gets busier or quieter mid-run touches every
configuration alike), and prints per configuration the medians and ranges of the first map, the start-up
stall and the stall until the live model's map, and each mechanism's gain: the median with it off minus the
median with all on. The 1-minute load average before each launch is printed beside them: on a shared machine
the absolute figures drift; the pairs, measured side by side, are what to compare.
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
           "live_attention_s": ("live map", 1000.0, "ms")}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def measure_startup_switches(repeat: int = 5, mechanisms: tuple[str, ...] | None = None,
                             model: str | None = None, progress=None) -> dict:
    """Launch the app with all mechanisms on and with each off, ``repeat`` rounds, interleaved.

    Returns a dict of printable figures: per configuration the median (range) of each of :data:`FIGURES`
    in ms, and per mechanism ``"<name> gain ..."``: median off − median on (positive: the mechanism helps).
    """
    from attnviz.gui.startup.switches import MECHANISMS, env_name

    names = tuple(mechanisms) if mechanisms is not None else tuple(MECHANISMS)
    # "a+b": both off in one configuration
    configs = [("all on", {})] + [(f"{n} off", {env_name(x): "0" for x in n.split("+")}) for n in names]
    results: dict[str, list[dict]] = {label: [] for label, _ in configs}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="attnviz-bench-cache-") as cache:
        measure_startup(model=model, cache_dir=cache)  # a first launch writes the import plans the others read
        for round_ in range(max(1, int(repeat))):
            shift = round_ % len(configs)
            for label, env in configs[shift:] + configs[:shift]:
                loads.append(os.getloadavg()[0])
                results[label].append(measure_startup(model=model, cache_dir=cache, extra_env=env))
                if progress is not None:
                    progress(f"round {round_ + 1}/{repeat}: {label}")
    out: dict = {"launches per configuration": max(1, int(repeat)),
                 "load 1 min before each launch, median (range)": f"{statistics.median(loads):.1f} "
                                                                  f"({min(loads):.1f}-{max(loads):.1f}) on "
                                                                  f"{os.cpu_count()} cores"}
    medians: dict[str, dict[str, float]] = {}
    for label, runs in results.items():
        medians[label] = {}
        for key, (name, scale, unit) in FIGURES.items():
            values = [r[key] * scale for r in runs if key in r]
            if values:
                medians[label][key] = statistics.median(values)
                out[f"{label}: {name} {unit}, median (range)"] = _spread(values)
    base = medians["all on"]
    for name in names:
        off = medians[f"{name} off"]
        gains = [f"{FIGURES[k][0]} {off[k] - base[k]:+.0f}" for k in FIGURES if k in off and k in base]
        out[f"{name} gain (median off - on), ms"] = ", ".join(gains)
    out["goals"] = "first map <= 1000 ms, start-up stall <= 100 ms, stall until live <= 100 ms (all on)"
    return out
