"""A claim, measured: :class:`ClaimResult`, and the caption that names its numbers. Qt-free."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ClaimResult", "format_caption"]


@dataclass
class ClaimResult:
    """One claim, measured. ``here``: on the scene's own input; ``held_out``: on fresh held-out data
    (None when the claim does not depend on data); ``values``: every number, for the caption."""

    kind: str
    here: float
    held_out: float | None
    ok: bool
    line: str
    values: dict = field(default_factory=dict)


def format_caption(template: str, result: ClaimResult | None) -> str:
    """Fill ``{name}`` / ``{name:.2f}`` fields of a caption with the claim's measured values.

    The fixed placeholder language of :mod:`attnviz.lessons.caption` (never ``str.format``: captions come
    from shared files). InputError, one line, for a malformed field or a value the claim does not measure.
    """
    if not template or result is None:
        return template
    from attnviz.lessons.caption import fill_caption

    return fill_caption(template, result.values)
