"""``attnviz export``."""

from __future__ import annotations

from attnviz.errors import AttnvizError


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="(not built yet)")
    p.set_defaults(run=run)


def run(args) -> int:
    raise AttnvizError("'export' is not built yet")
