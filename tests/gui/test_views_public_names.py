"""The views import one another's public names only: a private name (``_call``) reached from another module is a
name its owner may change without looking (rollout_view imported base's ``_call``; it is ``call_catching`` now)."""

from __future__ import annotations

import ast
from pathlib import Path

import attnviz.gui.views as views


def private_reaches(source: str) -> list[str]:
    """``module.name`` of every private name imported from another attnviz module in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attnviz"):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_no_view_imports_a_private_name():
    folder = Path(views.__file__).parent
    reached = {p.name: private_reaches(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.py"))}
    assert {name: got for name, got in reached.items() if got} == {}


def test_the_check_finds_a_private_import():  # the negative control
    assert private_reaches("from attnviz.gui.views.base import BaseView, _call as run\n") == ["attnviz.gui.views.base._call"]
    assert private_reaches("from __future__ import annotations\nfrom attnviz.gui.views.base import BaseView\n") == []
