"""``attnviz eval``."""

from __future__ import annotations

from attnviz.errors import AttnvizError


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="(not built yet)")
    p.set_defaults(run=run)


def run(args) -> int:
    raise AttnvizError("'eval' is not built yet")
