"""The lecture's T² slide, measured: time and memory of one attention layer against the input length.

Two ways to compute softmax(q·kᵀ·scale + causal mask)·v with the model's own head count and head size:
*eager* materialises the (H, T, T) scores and probabilities, as a textbook (and ``output_attentions``)
does; *tiled* is PyTorch's ``scaled_dot_product_attention``, whose flash kernel works in blocks with a
running log-sum-exp and never holds T×T. Time is the shortest wall time of ``repeat`` calls on this
machine (other programs only ever add time: a median of three on a busy machine once drew T = 256 slower
than 512); memory is the peak of the bytes of tensors alive at once that the call's torch operations
return, counted as they run (so both are what the code did, never a formula). Qt-free; torch on demand.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from attnviz.errors import InputError

__all__ = ["AttentionCost", "measure_attention_cost", "shared_attention_cost", "trace_attention_shape",
           "growth_exponent", "PATHS", "DEFAULT_LENGTHS", "SLIDE_LENGTHS", "growth_words", "power_of_t", "NEAR_WHOLE"]

DEFAULT_LENGTHS = (256, 512, 1024, 2048, 4096)
SLIDE_LENGTHS = (256, 512, 1024, 2048)  # the slide, its lesson scene and the app's Measure: seconds on a laptop CPU
MAX_EAGER_BYTES = 3 * 2**30  # an eager length whose scores alone exceed this is not run (said in the notes)


def _eager(q, k, v):
    import torch

    s = (q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)  # (1, H, T, T): the materialised scores
    causal = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu_(1)
    p = torch.softmax(s.masked_fill_(causal, float("-inf")), dim=-1)  # (1, H, T, T)
    return p @ v


def _tiled(q, k, v):
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash kernel: blocks, never T×T


PATHS = {"eager": _eager, "tiled": _tiled}  # tests swap one to check the claim notices


def _peak_tensor_bytes(fn) -> int:
    """Peak bytes of the tensors alive at once that ``fn()`` allocates, counted as every torch operation
    returns them (a dispatch mode: the operations the path really runs, not a formula). A kernel's own
    scratch space inside one operation is not a tensor and is not counted."""
    import weakref

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    live = [0, 0]  # bytes alive now, the most seen

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            seen = set()
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in seen:
                    seen.add(t.untyped_storage().data_ptr())
                    if t._is_view():  # a view shares its base's bytes (transpose, expand)
                        continue
                    n = t.untyped_storage().nbytes()
                    live[0] += n
                    live[1] = max(live[1], live[0])
                    weakref.finalize(t, _release, live, n)
            return out

    with Count():
        result = fn()
        del result
    return live[1]


def _release(live, n: int) -> None:
    live[0] -= n


@dataclass
class AttentionCost:
    """Measured points: per length, milliseconds (the fastest of the timed calls) and peak tensor bytes of
    each path (NaN where not run)."""

    lengths: list[int]
    n_heads: int
    d_head: int
    ms: dict[str, list[float]]
    bytes: dict[str, list[float]]
    machine: str
    notes: list[str] = field(default_factory=list)


def machine_line() -> str:
    """What the figure was measured on: processor, cores, torch threads and version."""
    import torch

    cpu = platform.processor() or platform.machine()
    threads = torch.get_num_threads()
    return (f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} ({threads} thread{'s' * (threads != 1)}), "
            "CPU")


def measure_attention_cost(n_heads: int, d_head: int, lengths=DEFAULT_LENGTHS, repeat: int = 3,
                           seed: int = 0) -> AttentionCost:
    """Time and memory of the eager and tiled paths at each length, on this machine.

    Parameters
    ----------
    n_heads, d_head : the model's query heads and head size (one layer, batch of one, float32).
    lengths : input lengths T. repeat : timed calls per point (the shortest is kept).

    Raises
    ------
    InputError : no lengths, or a length below 16.
    """
    lengths = sorted(int(t) for t in lengths)
    if not lengths or lengths[0] < 16:
        raise InputError("give lengths of at least 16 tokens")
    ms, used, notes = _measure(n_heads, d_head, lengths, repeat, seed)
    return AttentionCost(lengths, n_heads, d_head, ms, used, machine_line(), notes)


_SHARED: dict = {"key": None, "cost": None}
_SHARED_LOCK = threading.Lock()


def shared_attention_cost(n_heads: int, d_head: int, lengths=SLIDE_LENGTHS, repeat: int = 3,
                          fresh: bool = False) -> AttentionCost:
    """The latest measurement for this shape, or a new one: what a lesson scene's figure and its caption's
    claim both show.

    They are computed on two worker threads at once; measured twice, the slide's plot and its caption
    named different milliseconds (913 against ~840 ms at T = 2,048), and the two runs slowed each other. The
    lock makes the second caller wait for the first one's points. ``fresh`` measures again (the app's
    Measure button). A swapped path (``PATHS``, the tests' controls) is another measurement.
    """
    key = (int(n_heads), int(d_head), tuple(sorted(int(t) for t in lengths)), int(repeat),
           tuple(PATHS.items()))
    with _SHARED_LOCK:
        if fresh or _SHARED["key"] != key:
            _SHARED["cost"] = measure_attention_cost(n_heads, d_head, lengths, repeat=repeat)
            _SHARED["key"] = key
        return _SHARED["cost"]


def trace_attention_shape(trace) -> tuple[int, int]:
    """(query heads, head size) of ``trace``'s model: the shape the slide measures at."""
    d_head = trace.description.d_head or trace["L0.q"].shape[-1]
    return int(trace.n_heads), int(d_head)


def _measure(n_heads: int, d_head: int, lengths: list[int], repeat: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    ms = {name: [] for name in PATHS}
    used = {name: [] for name in PATHS}
    notes = []
    for T in lengths:
        q, k, v = (torch.randn(1, n_heads, T, d_head, generator=g) for _ in range(3))  # (1, H, T, dh)
        for name, fn in PATHS.items():
            if name == "eager" and 2 * n_heads * T * T * 4 > MAX_EAGER_BYTES:
                ms[name].append(float("nan"))
                used[name].append(float("nan"))
                notes.append(f"eager not run at T = {T:,} (its two (H, T, T) arrays would exceed "
                             f"{MAX_EAGER_BYTES / 2**30:.0f} GB)")
                continue
            with torch.no_grad():
                fn(q, k, v)  # warm: first-call allocations and kernel selection are not the path's cost
                used[name].append(float(_peak_tensor_bytes(lambda: fn(q, k, v))))
                times = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    fn(q, k, v)
                    times.append((time.perf_counter() - start) * 1000)
            ms[name].append(min(times))
    return ms, used, notes


def growth_exponent(lengths, values, min_value: float = 0.0) -> float:
    """Slope of log(value) against log(T) over the points above ``min_value`` (2: grows like T², 1: like T)."""
    t = np.asarray(lengths, float)
    y = np.asarray(values, float)
    keep = np.isfinite(y) & (y > min_value)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
NEAR_WHOLE = 0.15  # a fitted exponent this close to a whole number reads as that power of T


def power_of_t(k: int) -> str:
    """T to a whole power as a lecturer writes it on a slide: "T²", "T", "1" (not "T^2")."""
    if k == 0:
        return "1"
    return "T" if k == 1 else "T" + str(k).translate(_SUPERSCRIPT)


def growth_words(exponent: float) -> str:
    """The fitted exponent in words, the measured number kept: "to the power 1.98 (≈ T²)"; an exponent between
    whole powers says so ("to the power 1.50, between T and T²") rather than rounding to a power it is not."""
    import math

    if exponent != exponent:  # NaN: fewer than two lengths ran
        return "not measured (too few lengths ran)"
    k = round(exponent)
    if abs(exponent - k) <= NEAR_WHOLE:
        return f"to the power {exponent:.2f} (≈ {power_of_t(k)})"
    return f"to the power {exponent:.2f}, between {power_of_t(math.floor(exponent))} and {power_of_t(math.ceil(exponent))}"
