"""Two shares measured on the same n held-out items, compared in words a slide can carry."""

from __future__ import annotations

import math

__all__ = ["versus", "rollout_verdict"]


def versus(a: float, b: float, n: int) -> str:
    """Whether share ``a`` beats share ``b`` on ``n`` items: a gap within two standard errors of a difference of
    two shares (each at most 0.5/√n) is called a tie, not a win."""
    if abs(a - b) <= 2 * math.sqrt(0.5) / math.sqrt(max(n, 1)):
        return "a tie within noise"
    return "rollout ahead" if a > b else "rollout behind"


def rollout_verdict(metrics: dict) -> str | None:
    """The model's own held-out pointing game, rollout against raw last-layer [CLS] attention, in one line; None
    when the model stored no such measurement (every model but the bundled shapes classifier)."""
    try:
        roll, raw, n = float(metrics["offcentre_rollout"]), float(metrics["offcentre_raw"]), int(metrics["offcentre_n"])
    except (KeyError, TypeError, ValueError):
        return None
    return (f"held out ({n:,} off-centre scenes): rollout peaks on the shape {roll:.1%}, raw last-layer attention "
            f"{raw:.1%}: {versus(roll, raw, n)}")
