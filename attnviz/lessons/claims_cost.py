"""The T² claim: the eager path's memory grows like T², the tiled (SDPA) path's like T — measured here.

The measurement is :func:`attnviz.runtime.attention_cost.measure_attention_cost` at the scene model's own
head count and head size, at T = 256, 512, … up to ``max_length`` (default 2,048); the growth is the slope
of log(bytes) against log(T). It holds when the eager slope is within ``tolerance`` (default 0.3) of 2 and
the tiled slope within it of 1. Qt-free.
"""

from __future__ import annotations

from attnviz.lessons.claim_result import ClaimResult

__all__ = ["attention_cost", "DEFAULT_LENGTHS"]

DEFAULT_LENGTHS = (256, 512, 1024, 2048)  # a few seconds on a laptop's CPU for a small model


def _lengths(max_length: int) -> list[int]:
    """256, 512, … doubling up to ``max_length``."""
    out = [256]
    while out[-1] * 2 <= max_length:
        out.append(out[-1] * 2)
    return out


def attention_cost(scene, bench, trace, state, p, seed, n):
    """Measure both paths up to ``p["max_length"]`` on this machine; the module docstring says when it holds."""
    from attnviz.runtime.attention_cost import growth_exponent, measure_attention_cost

    d_head = int(trace.description.d_head or trace["L0.q"].shape[-1])
    lengths = _lengths(int(p.get("max_length", DEFAULT_LENGTHS[-1])))
    cost = measure_attention_cost(trace.n_heads, d_head, lengths, repeat=1, seed=seed)
    eager = growth_exponent(cost.lengths, cost.bytes["eager"])
    tiled = growth_exponent(cost.lengths, cost.bytes["tiled"])
    tol = float(p.get("tolerance", 0.3))
    ok = bool(abs(eager - 2.0) <= tol and abs(tiled - 1.0) <= tol)  # NaN (too few points): fails
    last = max(i for i, b in enumerate(cost.bytes["eager"]) if b == b)  # the longest length eager ran at
    values = {"eager_exp": eager, "tiled_exp": tiled, "t_max": cost.lengths[last],
              "eager_mb": cost.bytes["eager"][last] / 1e6, "tiled_mb": cost.bytes["tiled"][last] / 1e6,
              "eager_ms": cost.ms["eager"][last], "tiled_ms": cost.ms["tiled"][last], "machine": cost.machine,
              "heads": trace.n_heads, "d_head": d_head}
    line = (f"memory against T on {cost.machine}: eager (T×T scores) grows as T^{eager:.2f}, tiled (SDPA) as "
            f"T^{tiled:.2f}; at T = {values['t_max']:,}: {values['eager_mb']:.1f} MB vs {values['tiled_mb']:.1f} MB, "
            f"{values['eager_ms']:.0f} ms vs {values['tiled_ms']:.0f} ms ({trace.n_heads} heads × {d_head})")
    return ClaimResult("attention-cost", here=eager, held_out=None, ok=ok, line=line, values=values)
