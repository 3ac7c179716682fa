"""The T² claim: the eager path's memory grows like T², the tiled (SDPA) path's like T — measured here.

The measurement is :func:`attnviz.runtime.attention_cost.shared_attention_cost` at the scene model's own
head count and head size, at T = 256, 512, … up to ``max_length`` (default 2,048): the same points the
scene's figure draws. The growth is the slope of log(bytes) against log(T). It holds when the eager slope is
within ``tolerance`` (default 0.3) of 2 and the tiled slope within it of 1, and its negative control fails: the
same test with the two paths' points swapped (eager judged as the tiled path, tiled as eager) must not hold, or
the test could not tell the paths apart (a tolerance of 0.5 or more lets both pass). The control's outcome is in
the caption (``{control}``) and in ``attnviz lesson check``'s line. :func:`judge_cost` judges any measurement (the
tests hand it made-up ones). Qt-free.
"""

from __future__ import annotations

from attnviz.lessons.claim_result import ClaimResult

from attnviz.runtime.attention_cost import SLIDE_LENGTHS as DEFAULT_LENGTHS  # a few seconds on a laptop's CPU
# the words for a fitted exponent live beside the fit (the app's cost view titles its figure with them too)
from attnviz.runtime.attention_cost import NEAR_WHOLE, growth_words, power_of_t  # noqa: F401

__all__ = ["attention_cost", "judge_cost", "DEFAULT_LENGTHS", "power_of_t", "growth_words"]

def _lengths(max_length: int) -> list[int]:
    """256, 512, … doubling up to ``max_length``."""
    out = [256]
    while out[-1] * 2 <= max_length:
        out.append(out[-1] * 2)
    return out


def attention_cost(scene, bench, trace, state, p, seed, n):
    """Measure both paths up to ``p["max_length"]`` on this machine; the module docstring says when it holds.
    (``seed`` is the held-out examples' seed: this claim has none, and random q, k, v values do not change
    what the paths cost.)"""
    from attnviz.runtime.attention_cost import shared_attention_cost, trace_attention_shape

    heads, d_head = trace_attention_shape(trace)
    cost = shared_attention_cost(heads, d_head, _lengths(int(p.get("max_length", DEFAULT_LENGTHS[-1]))))
    return judge_cost(cost, float(p.get("tolerance", 0.3)), model=scene.model)


def judge_cost(cost, tolerance: float = 0.3, model: str | None = None) -> ClaimResult:
    """The claim on a measurement ``cost`` (an :class:`~attnviz.runtime.attention_cost.AttentionCost`):
    eager memory's growth exponent within ``tolerance`` of 2 and the tiled path's within it of 1."""
    from attnviz.runtime.attention_cost import growth_exponent

    eager = growth_exponent(cost.lengths, cost.bytes["eager"])
    tiled = growth_exponent(cost.lengths, cost.bytes["tiled"])

    def holds(quadratic: float, linear: float) -> bool:  # NaN (too few points): fails
        return bool(abs(quadratic - 2.0) <= tolerance and abs(linear - 1.0) <= tolerance)

    swapped = holds(tiled, eager)  # the negative control: must fail
    ok = holds(eager, tiled) and not swapped
    ran = [i for i, b in enumerate(cost.bytes["eager"]) if b == b]
    last = ran[-1] if ran else len(cost.lengths) - 1  # the longest length eager ran at
    shape = f"{cost.n_heads} heads × {cost.d_head}"
    values = {"eager_exp": eager, "tiled_exp": tiled, "t_max": cost.lengths[last],
              "eager_mb": cost.bytes["eager"][last] / 1e6, "tiled_mb": cost.bytes["tiled"][last] / 1e6,
              "eager_ms": cost.ms["eager"][last], "tiled_ms": cost.ms["tiled"][last], "machine": cost.machine,
              "heads": cost.n_heads, "d_head": cost.d_head, "model": model or shape, "shape": shape,
              "eager_growth": growth_words(eager), "tiled_growth": growth_words(tiled),
              "control": "also holds: the test cannot tell them apart" if swapped else "fails, as it must"}
    # the words of the scene's caption and the deck (issue 36: "grows as T^2.00" in `lesson check`)
    line = (f"memory against T on {cost.machine}: eager (T×T scores) grows with T {values['eager_growth']}, tiled "
            f"(SDPA) {values['tiled_growth']}; at T = {values['t_max']:,}: {values['eager_mb']:.1f} MB vs {values['tiled_mb']:.1f} MB, "
            f"{values['eager_ms']:.0f} ms vs {values['tiled_ms']:.0f} ms ({shape}"
            + (f", {model}'s shape)" if model else ")")
            + f"; control: the same test with the two paths swapped {values['control']}")
    return ClaimResult("attention-cost", here=eager, held_out=None, ok=ok, line=line, values=values)
