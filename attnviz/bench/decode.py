"""Decoding and the model's share of a keystroke: ``attnviz bench --only decode``.

Greedy decoding with the key/value cache against the full re-run it replaces (``generate(cache=False)``)
on the bundled translation models, one typed input at a time as the app runs them and as a padded
batch of held-out inputs as the task's accuracy is scored; and the worker's whole run per keystroke
(:func:`attnviz.runtime.run_trace`: tokenize, translate, capture, rollout) for the models issue 18
names, without the views. CPU time is reported beside wall time: on a shared machine it is the steadier
of the two.
"""

from __future__ import annotations

import os
import statistics
import time

__all__ = ["measure_decode", "measure_model_keystroke", "run_decode_benchmarks"]


def _timed(fn, n: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``n`` calls (one warm-up call first)."""
    fn()
    wall, cpu = [], []
    for _ in range(n):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def _one_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the app runs its model lane on one thread on this machine's size
    return before


def measure_decode(name: str, n: int = 30, batch: int = 64) -> dict:
    """Cached against full greedy decoding of the bundled ``name`` (an encoder–decoder).

    Returns
    -------
    dict: per-input medians over the task's example sentences (ms, wall and CPU, both ways), the batch
    figures, output tokens per example, and how many outputs differ between the two ways (0 expected).
    """
    import numpy as np
    import torch

    from attnviz.runtime import load_model, prepare_text, task_of

    loaded = load_model(name)
    model, task = loaded.model, task_of(loaded)
    kw = dict(bos=task.bos_id, eos=task.eos_id, max_new=loaded.config.max_len - 1)
    sources = [prepare_text(loaded, text).inputs["src"] for text in task.examples() if isinstance(text, str)]
    held_out = task.sample_batch("test", batch, np.random.default_rng(0)).inputs
    out: dict = {}
    differ = 0
    before = _one_thread()
    try:
        for cache in (True, False):
            way = "cached" if cache else "full"
            per_input = [_timed(lambda s=s: model.generate(s, cache=cache, **kw), n) for s in sources]
            out[f"{name} one input {way} ms"] = statistics.median(w for w, _ in per_input)
            out[f"{name} one input {way} cpu ms"] = statistics.median(c for _, c in per_input)
            wall, cpu = _timed(lambda: model.generate(held_out["src"], src_pad=held_out["src_pad"], cache=cache,
                                                      **kw), max(3, n // 5))
            out[f"{name} batch of {batch} {way} ms"], out[f"{name} batch of {batch} {way} cpu ms"] = wall, cpu
        for s in sources:
            differ += not torch.equal(model.generate(s, **kw), model.generate(s, cache=False, **kw))
        differ += not torch.equal(model.generate(held_out["src"], src_pad=held_out["src_pad"], **kw),
                                  model.generate(held_out["src"], src_pad=held_out["src_pad"], cache=False, **kw))
    finally:
        torch.set_num_threads(before)
    out[f"{name} output tokens per example (median)"] = statistics.median(
        int(model.generate(s, **kw).shape[1]) for s in sources)
    full, cached = out[f"{name} one input full cpu ms"], out[f"{name} one input cached cpu ms"]
    out[f"{name} cpu speed-up one input"] = full / cached
    out[f"{name} outputs differing cached vs full"] = differ
    return out


def measure_model_keystroke(name: str, text: str | None = None, n: int = 30) -> dict:
    """The worker's run for one keystroke, :func:`~attnviz.runtime.run_trace` as the app calls it (no views).

    ``text`` defaults to the task's example input.
    """
    from attnviz.runtime import load_model, run_trace, task_of

    loaded = load_model(name)
    if text is None:
        text = task_of(loaded).example_input()
    before = _one_thread()
    try:
        wall, cpu = _timed(lambda: run_trace(loaded, text=text, truncate=True), n)
    finally:
        import torch

        torch.set_num_threads(before)
    key = f"{name}@{len(text)}" if name == "charlm" else name
    return {f"keystroke model run [{key}] ms": wall, f"keystroke model run [{key}] cpu ms": cpu}


def run_decode_benchmarks(repeat: int = 5, models: tuple[str, ...] = ("reverse", "translate")) -> dict:
    """Every figure of the section; ``repeat`` scales the number of timed calls."""
    from attnviz.bench.gui import charlm_text

    n = max(10, 6 * repeat)
    out: dict = {"load_1min": os.getloadavg()[0]}
    for name in models:
        out.update(measure_decode(name, n=n))
    for name, text in [(m, None) for m in models] + [("charlm", charlm_text(64)), ("charlm", charlm_text())]:
        out.update(measure_model_keystroke(name, text, n=n))
    out["load_1min after"] = os.getloadavg()[0]
    return out
