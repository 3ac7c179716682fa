"""``attnviz steps``."""

from __future__ import annotations

from attnviz.errors import AttnvizError


def add_parser(sub) -> None:
    p = sub.add_parser("steps", help="(not built yet)")
    p.set_defaults(run=run)


def run(args) -> int:
    raise AttnvizError("'steps' is not built yet")
