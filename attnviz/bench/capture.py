"""Benchmarks for the capture path: overhead vs the fused forward, and memory held by a Trace."""

from __future__ import annotations

import statistics
import time

import torch

from attnviz.capture.record import capture
from attnviz.models.config import ModelConfig
from attnviz.models.registry import build_model

__all__ = ["measure_capture_overhead", "measure_trace_memory", "BASE_CONFIG"]

# BERT-base-sized encoder (12 layers, 12 heads, d=768)
BASE_CONFIG = dict(kind="encoder", vocab_size=30522, n_layers=12, n_heads=12, d_model=768, max_len=4096,
                   norm="post", pos="learned", head="classify", n_classes=2)
TINY_CONFIG = dict(kind="encoder", vocab_size=100, n_layers=2, n_heads=4, d_model=64, max_len=128, n_classes=2)


def _median_time(fn, repeat: int) -> float:
    fn()  # warm-up (allocators, kernels)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _pair(cfg_kw: dict, T: int, repeat: int) -> tuple[float, float]:
    torch.manual_seed(0)
    model = build_model(ModelConfig(**cfg_kw)).eval()
    ids = torch.randint(7, cfg_kw["vocab_size"], (1, T))
    tokens = [str(i) for i in range(T)]

    def fused():
        with torch.no_grad():
            model(ids=ids)

    def captured():
        capture(model, {"ids": ids}, tokens)

    # interleave so machine noise hits both alike
    f1, c1 = _median_time(fused, repeat), _median_time(captured, repeat)
    f2, c2 = _median_time(fused, repeat), _median_time(captured, repeat)
    return min(f1, f2), min(c1, c2)


def measure_capture_overhead(repeat: int = 5) -> dict:
    """Median wall time of the fused forward and of capture() (every intermediate to numpy)."""
    out = {"torch threads": torch.get_num_threads()}
    for name, cfg, T in (("tiny (2L 4H d64)", TINY_CONFIG, 32), ("base (12L 12H d768)", BASE_CONFIG, 128)):
        fused, captured = _pair(cfg, T, repeat)
        out[f"{name} T={T} fused forward ms"] = fused * 1e3
        out[f"{name} T={T} capture ms"] = captured * 1e3
        out[f"{name} T={T} capture / fused"] = captured / fused
    out["goal (base)"] = "<= 1.25x"
    return out


def measure_trace_memory(T: int = 1024) -> dict:
    """Bytes held by the Trace of the base-sized model (L=12, H=12) at T tokens."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(**BASE_CONFIG)).eval()
    ids = torch.randint(7, BASE_CONFIG["vocab_size"], (1, T))
    t0 = time.perf_counter()
    trace = capture(model, {"ids": ids}, [str(i) for i in range(T)])
    took = time.perf_counter() - t0
    return {
        f"L=12 H=12 T={T} trace held GB": trace.nbytes / 1e9,
        "precision": trace.description.precision,
        "capture seconds": took,
        "goal": "<= 0.5 GB",
    }
