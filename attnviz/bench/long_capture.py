"""Long inputs on a SmolLM2-shaped decoder: capture on demand against the model's own SDPA forward (``bench --only long``).

The decoder is random-weight, LlamaConfig with SmolLM2-135M's shape (30 layers, d 576, 9 query / 3 key-value
heads, intermediate 1,536, vocabulary 49,152, tied embeddings, rotary). Figures are printed, never asserted.

1. time: ``capture_hf`` (attention="auto": from 256 tokens the SDPA kernel with each row's log-sum-exp, the
   probabilities recomputed when asked) against the same model's SDPA forward returning only the last
   position's logits (``logits_to_keep=1``: the capture projects the last position only too). Same process,
   warm (one run of each first), runs interleaved, median of ``repeat``; wall and CPU time (the machine may be
   shared: CPU time is the steadier figure).
2. memory: each figure is a fresh child process's peak resident memory minus its memory once the model is
   built (so: over the weights). "added" is capture's peak minus the SDPA forward's, against the bytes of the
   arrays the trace keeps (``Trace.nbytes``), and how much the C allocator's free bytes grew during each run
   (resident, held by no array: at 512 tokens the capture's grew by 90-115 MiB in most fresh children and ~15 MiB
   in a few, the forward's by 25-50 MiB: what the capture adds beyond what it keeps is these holes).
3. T = 8,192 and 16,384 at full depth (every layer kept in full, as ``attnviz trace`` and
   ``attnviz.load(dir).trace(text)`` keep it; beyond a memory budget the layers are written to the trace's
   temporary folder and memory-mapped: :mod:`attnviz.capture.spill`): each a fresh child's peak resident memory
   (VmHWM, /proc/self/status) absolute and over the weights' bytes (the goal: weights + 2 GB), the capture's wall
   time against the same child's SDPA forward afterwards (warm: in the memory the capture freed) and against the
   SDPA forward in a fresh child of its own (cold, as the capture), and what went to disk; the same with float16
   weights.
   These take minutes each on two cores, so they run only when asked: ``attnviz bench --only long --long-T
   8192,16384`` (or ``ATTNVIZ_BENCH_LONG_T``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

__all__ = ["iter_long_capture", "measure_long_capture", "SMOLLM2"]

SMOLLM2 = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
               num_key_value_heads=3, max_position_embeddings=32768, tie_word_embeddings=True, rope_theta=100000.0)


def _model(sizes: dict, dtype: str = "float32"):
    import torch

    from attnviz.hf.loader import quiet_transformers, require_transformers

    tf = require_transformers("the long-input benchmark")
    torch.manual_seed(0)
    with quiet_transformers(tf):
        model = tf.LlamaForCausalLM(tf.LlamaConfig(**sizes, attn_implementation="sdpa")).eval()
    return model.to(getattr(torch, dtype))


def _runs(model, T: int, layers=None):
    import torch

    from attnviz.hf.capture import capture_hf

    ids = torch.randint(0, model.config.vocab_size, (1, T), generator=torch.Generator().manual_seed(1))
    tokens = [str(i) for i in range(T)]

    def sdpa():
        with torch.no_grad():
            return model(input_ids=ids, logits_to_keep=1).logits[0, -1]

    def capture():
        return capture_hf(model, {"input_ids": ids}, tokens, layers=layers)

    return sdpa, capture


def _minor_faults() -> int:
    """This process's minor page faults so far (first touches of fresh pages; 0 where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _timed(fn) -> tuple[float, float, int]:
    """(wall s, CPU s, minor page faults) of one call."""
    f0, w0, c0 = _minor_faults(), time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0, _minor_faults() - f0


def _time_rows(model, T: int, repeat: int) -> dict:
    sdpa, capture = _runs(model, T)
    sdpa(), capture()  # warm: first calls allocate, the output head is verified once
    got = {"sdpa": [], "capture": []}
    for _ in range(repeat):
        for name, fn in (("sdpa", sdpa), ("capture", capture)):
            got[name].append(_timed(fn))
    med = {k: tuple(statistics.median(run[j] for run in v) for j in range(3)) for k, v in got.items()}
    return {
        f"T={T}: minor page faults SDPA forward / capture (median)": f"{med['sdpa'][2]:,.0f} / {med['capture'][2]:,.0f}",
        f"T={T}: SDPA forward (last logits) wall s": med["sdpa"][0],
        f"T={T}: SDPA forward CPU s": med["sdpa"][1],
        f"T={T}: capture wall s": med["capture"][0],
        f"T={T}: capture CPU s": med["capture"][1],
        f"T={T}: capture / SDPA forward (wall)": med["capture"][0] / med["sdpa"][0],
        f"T={T}: capture / SDPA forward (CPU time)": med["capture"][1] / med["sdpa"][1],
    }


def child(spec: dict) -> dict:
    """Run one measurement in a fresh Python process (peak RSS is per process); returns its figures."""
    out = subprocess.run([sys.executable, "-m", "attnviz.bench.long_capture", json.dumps(spec)], capture_output=True,
                         text=True, check=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _long_lengths(long_T) -> tuple[int, ...]:
    if long_T is not None:
        return tuple(long_T) if isinstance(long_T, (tuple, list)) else ((int(long_T),) if long_T else ())
    env = os.environ.get("ATTNVIZ_BENCH_LONG_T")
    if not env:  # minutes each: asked for (``bench --long-T 8192,16384``), never by default
        return ()
    return tuple(int(x) for x in env.split(",") if x.strip())


def iter_long_capture(repeat: int = 3, lengths=(512, 4096), mem_T=(512, 4096), long_T=None,
                      sizes: dict | None = None):
    """The section's figures (module docstring), one group at a time as each is measured (the CLI prints each
    group at once: a full-depth length takes minutes). ``sizes``/``lengths`` smaller in tests; ``long_T`` the
    full-depth lengths (default: ``ATTNVIZ_BENCH_LONG_T`` or none; 0 or () for none)."""
    import torch

    from attnviz.hf.allocator import MMAP_THRESHOLD, TRIM_THRESHOLD, keep_freed_memory

    sizes = {**SMOLLM2, **(sizes or {})}
    model = _model(sizes)
    yield {"decoder": f"SmolLM2-shaped random Llama {sizes['num_hidden_layers']}L d{sizes['hidden_size']} "
                      f"{sizes['num_attention_heads']}/{sizes['num_key_value_heads']} heads, SDPA",
           "torch threads": torch.get_num_threads(),
           # what the process runs under: the attnviz command sets both before torch loads (attnviz/cli.py); a
           # script or notebook does not (passive OpenMP threads sleep between the capture's small steps and
           # wake for the next product: 512 tokens measured 1.10x in a script with it, 1.04x without)
           "OpenMP wait policy / huge pages (environment)": f"{os.environ.get('OMP_WAIT_POLICY', 'default')} / "
                                                           f"{os.environ.get('THP_MEM_ALLOC_ENABLE', 'unset')}",
           # fixed by the first long capture (attnviz.hf.allocator.keep_freed_memory): here before either run, so the
           # SDPA forward and the capture run under the same thresholds
           "C allocator thresholds (glibc)": f"fixed: blocks under {MMAP_THRESHOLD >> 20} MiB reused, up to "
                                             f"{TRIM_THRESHOLD >> 20} MiB kept free at the top" if keep_freed_memory()
                                             else "the allocator's own",
           "parameters": sum(p.numel() for p in model.parameters()),
           "goal": "capture <= 1.05x the SDPA forward (wall and CPU); added <= 1.1x kept; 16,384: peak <= weights "
                   "+ 2 GB"}
    for T in lengths:
        yield _time_rows(model, T, repeat)
    del model
    for T in (mem_T if isinstance(mem_T, (tuple, list)) else (mem_T,) if mem_T else ()):
        yield _memory_rows(sizes, T)
    for T_long in _long_lengths(long_T):
        for dtype in ("float32", "float16"):
            yield _full_depth_rows(sizes, T_long, dtype)


def measure_long_capture(repeat: int = 3, lengths=(512, 4096), mem_T=(512, 4096), long_T=None,
                         sizes: dict | None = None) -> dict:
    """All of :func:`iter_long_capture`'s figures in one dict."""
    rows: dict = {}
    for group in iter_long_capture(repeat, lengths, mem_T, long_T, sizes):
        rows.update(group)
    return rows


def _memory_rows(sizes: dict, mem_T: int) -> dict:
    base = {"sizes": sizes, "T": mem_T, "dtype": "float32", "layers": None}
    fwd, cap = child({**base, "mode": "sdpa"}), child({**base, "mode": "capture"})
    added = cap["peak"] - fwd["peak"]
    beyond_weights = cap["trace_bytes"] - cap.get("weight_view_bytes", 0)
    return {
        f"T={mem_T}: SDPA forward peak over weights MiB": fwd["peak"] / 2**20,
        f"T={mem_T}: capture peak over weights MiB": cap["peak"] / 2**20,
        f"T={mem_T}: capture adds MiB (peak - forward's peak)": added / 2**20,
        f"T={mem_T}: trace keeps MiB (of which views of the model's weights)":
            f"{cap['trace_bytes'] / 2**20:.4g} ({cap.get('weight_view_bytes', 0) / 2**20:.4g})",
        f"T={mem_T}: added / kept": added / max(1, cap["trace_bytes"]),
        f"T={mem_T}: added / kept beyond the weight views": added / max(1, beyond_weights),
        f"T={mem_T}: minor page faults SDPA forward / capture (fresh child, first call)":
            f"{fwd.get('faults', 0):,} / {cap.get('faults', 0):,}",
        # resident but free: the part of the peak neither run's arrays hold (glibc's arenas; n/a elsewhere)
        f"T={mem_T}: C allocator's free bytes grown during the run, SDPA forward / capture MiB":
            f"{_mib(fwd.get('arena_free_grown'))} / {_mib(cap.get('arena_free_grown'))}",
    }


def _mib(n) -> str:
    return "n/a" if n is None else f"{n / 2**20:.4g}"


def _full_depth_rows(sizes: dict, T_long: int, dtype: str) -> dict:
    cap = child({"sizes": sizes, "T": T_long, "dtype": dtype, "layers": None, "mode": "capture", "then_sdpa": True})
    # the same child's forward runs warm, in the memory the capture freed; this one is cold, as the capture was
    cold = child({"sizes": sizes, "T": T_long, "dtype": dtype, "layers": None, "mode": "sdpa"})
    name = f"T={T_long} full depth, {dtype} weights"
    return {
        f"{name}: SDPA forward in a fresh child of its own, wall s / CPU s (cold, as the capture)":
            f"{cold['seconds']:.1f} / {cold['cpu']:.1f}",
        f"{name}: capture / that cold SDPA forward (wall; CPU)": f"{cap['seconds'] / cold['seconds']:.3f}; "
                                                                 f"{cap['cpu'] / cold['cpu']:.3f}",
        f"{name}: weights MiB": cap["weight_bytes"] / 2**20,
        f"{name}: capture peak resident (VmHWM) MiB": cap["hwm"] / 2**20,
        f"{name}: capture peak over weights MiB (goal <= 2048)": (cap["hwm"] - cap["weight_bytes"]) / 2**20,
        f"{name}: capture wall s / CPU s": f"{cap['seconds']:.1f} / {cap['cpu']:.1f}",
        f"{name}: SDPA forward wall s / CPU s (same child, after)": f"{cap['sdpa_seconds']:.1f} / "
                                                                     f"{cap['sdpa_cpu']:.1f}",
        f"{name}: capture / SDPA forward (wall; CPU)": f"{cap['seconds'] / cap['sdpa_seconds']:.3f}; "
                                                      f"{cap['cpu'] / cap['sdpa_cpu']:.3f}",
        f"{name}: trace keeps MiB (in memory + memory-mapped)": cap["trace_bytes"] / 2**20,
        f"{name}: written to the trace's folder MiB": cap["spilled_bytes"] / 2**20,
        f"{name}: files in the trace's folder (one open map each)": cap.get("spilled_files", 0),
    }


def _rss(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def _weight_view_bytes(trace, model) -> int:
    """Bytes of the trace's arrays that are views of the model's own parameters (kept, but not added memory)."""
    import numpy as np
    import torch

    params = [p.detach().numpy() for p in model.parameters() if p.dtype != torch.bfloat16]
    arrays = {id(a): a for a in trace.arrays.values()}.values()
    return sum(a.nbytes for a in arrays if any(np.may_share_memory(a, p) for p in params))


def _child(spec: dict) -> dict:
    import transformers  # noqa: F401 - imported before the baseline

    from attnviz.hf.allocator import free_arena_bytes

    model = _model(spec["sizes"], spec["dtype"])
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    sdpa, capture = _runs(model, 8, spec["layers"])
    capture()  # the app's first keystroke: verifies the output head
    sdpa, capture = _runs(model, spec["T"], spec["layers"])
    base = _rss("VmRSS:")
    try:  # reset the peak mark (Linux) so the peak is the measured run's
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        pass
    free0 = free_arena_bytes()
    f0, t0, c0 = _minor_faults(), time.perf_counter(), time.process_time()
    result = capture() if spec["mode"] == "capture" else sdpa()
    seconds, cpu, faults = time.perf_counter() - t0, time.process_time() - c0, _minor_faults() - f0
    hwm, free1 = _rss("VmHWM:"), free_arena_bytes()
    got = {"weight_bytes": weight_bytes, "peak": hwm - base, "hwm": hwm, "seconds": seconds, "cpu": cpu, "faults": faults,
           "arena_free_grown": None if free0 is None or free1 is None else free1 - free0,
           "trace_bytes": result.nbytes if spec["mode"] == "capture" else 0,
           "weight_view_bytes": _weight_view_bytes(result, model) if spec["mode"] == "capture" else 0,
           "spilled_bytes": result.spill.spilled_bytes if getattr(result, "spill", None) is not None else 0,
           "spilled_files": len(result.spill.files) if getattr(result, "spill", None) is not None else 0}
    if spec.get("then_sdpa"):  # the model's own forward in the same process, for the time ratio
        del result
        t0, c0 = time.perf_counter(), time.process_time()
        sdpa()
        got["sdpa_seconds"], got["sdpa_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    return got


if __name__ == "__main__":
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as the attnviz command sets it (attnviz.cli), before torch
    print(json.dumps(_child(json.loads(sys.argv[1]))))
