"""Benchmark of ``attnviz heads``: time for 1,000 inputs and peak memory for 1,000 and 10,000.

Each figure is measured in a fresh Python process so its peak resident memory (Linux ``VmHWM``) is
the run's own; memory is bounded when the 10,000-input peak is about the 1,000-input one.
Run ``python -m attnviz.bench.heads [MODEL]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

__all__ = ["bench_heads", "measure_heads"]


def _rss_mb(field: str) -> float:
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process in MB; NaN where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def measure_heads(model: str, n: int, batch_size: int = 64) -> dict:
    """Score ``n`` held-out inputs of ``model`` in this process; seconds and memory figures."""
    import torch

    from attnviz.runtime import load_model
    from attnviz.runtime.batch_scores import N_REPEATED, score_heads, scoring_threads
    from attnviz.runtime.dataset_inputs import dataset_batches, repeated_batches

    torch.set_num_threads(scoring_threads())  # as `attnviz heads` does
    loaded = load_model(model, device="cpu")
    before = _rss_mb("VmRSS")
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    repeated = repeated_batches(loaded, N_REPEATED, batch_size) if loaded.config.kind == "decoder" else None
    result = score_heads(loaded, dataset_batches(loaded, n=n, batch_size=batch_size), n, repeated=repeated)
    seconds = time.perf_counter() - t0
    return {"model": model, "n_inputs": result.n_inputs, "n_repeated": result.meta["n_repeated"],
            "seconds": seconds, "cpu_seconds": time.process_time() - cpu0, "rss_before_mb": before, "peak_mb": _rss_mb("VmHWM")}


def _in_child(model: str, n: int) -> dict:
    code = f"import json; from attnviz.bench.heads import measure_heads; print(json.dumps(measure_heads({model!r}, {n})))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_heads(model: str = "charlm", n: int = 1000, n_large: int = 10_000, out=None) -> dict:
    """Print and return: 1,000 inputs of ``model`` scored in X s (peak memory), and the peak for 10,000."""
    out = out or sys.stdout
    small = _in_child(model, n)
    print(f"heads: {small['n_inputs']} inputs of {model} in {small['seconds']:.2f} s "
          f"(CPU {small['cpu_seconds']:.2f} s), peak memory "
          f"{small['peak_mb']:.0f} MB ({small['rss_before_mb']:.0f} MB with the model loaded, before scoring; "
          f"+{small['n_repeated']} repeated sequences for the induction score)", file=out, flush=True)
    large = _in_child(model, n_large)
    print(f"heads: {large['n_inputs']} inputs of {model} in {large['seconds']:.2f} s "
          f"(CPU {large['cpu_seconds']:.2f} s), peak memory "
          f"{large['peak_mb']:.0f} MB ({large['rss_before_mb']:.0f} MB before scoring)", file=out, flush=True)
    return {"model": model, f"heads_{n}_seconds": small["seconds"], f"heads_{n}_cpu_seconds": small["cpu_seconds"],
            f"heads_{n}_peak_mb": small["peak_mb"], f"heads_{n_large}_cpu_seconds": large["cpu_seconds"],
            f"heads_{n_large}_seconds": large["seconds"], f"heads_{n_large}_peak_mb": large["peak_mb"],
            "rss_before_mb": small["rss_before_mb"]}


if __name__ == "__main__":
    bench_heads(*(sys.argv[1:2] or ["charlm"]))
