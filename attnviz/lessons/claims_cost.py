"""The T² claim: the eager path's memory grows like T², the tiled (SDPA) path's like T — measured here.

The measurement is :func:`attnviz.runtime.attention_cost.measure_attention_cost` at the scene model's own
head count and head size; the growth is the slope of log(bytes) against log(T). It holds when the eager
slope is within ``eager`` (default 1.7–2.3) and the tiled slope within ``tiled`` (0.6–1.3). Qt-free.
"""

from __future__ import annotations

from attnviz.lessons.claim_result import ClaimResult

__all__ = ["attention_cost", "DEFAULT_LENGTHS"]

DEFAULT_LENGTHS = (256, 512, 1024, 2048)  # a few seconds on a laptop's CPU for a small model


def _within(value: float, bounds) -> bool:
    return bool(bounds[0] <= value <= bounds[1])


def attention_cost(scene, bench, trace, state, p, seed, n):
    """Measure both paths at ``p["lengths"]`` on this machine; see the module docstring for when it holds."""
    from attnviz.runtime.attention_cost import growth_exponent, measure_attention_cost

    d_head = int(trace.meta.get("d_head") or trace["L0.q"].shape[-1])
    cost = measure_attention_cost(trace.n_heads, d_head, p.get("lengths", DEFAULT_LENGTHS), repeat=1, seed=seed)
    eager = growth_exponent(cost.lengths, cost.bytes["eager"])
    tiled = growth_exponent(cost.lengths, cost.bytes["tiled"])
    ok = _within(eager, p.get("eager", (1.7, 2.3))) and _within(tiled, p.get("tiled", (0.6, 1.3)))
    last = max(i for i, b in enumerate(cost.bytes["eager"]) if b == b)  # the longest length eager ran at
    values = {"eager_exp": eager, "tiled_exp": tiled, "t_max": cost.lengths[last],
              "eager_mb": cost.bytes["eager"][last] / 1e6, "tiled_mb": cost.bytes["tiled"][last] / 1e6,
              "eager_ms": cost.ms["eager"][last], "tiled_ms": cost.ms["tiled"][last], "machine": cost.machine,
              "heads": trace.n_heads, "d_head": d_head}
    line = (f"memory against T on {cost.machine}: eager (T×T scores) grows as T^{eager:.2f}, tiled (SDPA) as "
            f"T^{tiled:.2f}; at T = {values['t_max']:,}: {values['eager_mb']:.1f} MB vs {values['tiled_mb']:.1f} MB, "
            f"{values['eager_ms']:.0f} ms vs {values['tiled_ms']:.0f} ms ({trace.n_heads} heads × {d_head})")
    return ClaimResult("attention-cost", here=eager, held_out=None, ok=ok, line=line, values=values)
