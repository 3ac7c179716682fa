"""Module-level import structure of the Qt side: export sits above gui and the figures, and no module cycles.

Every ``import`` counts, including those inside functions (they are how start-up stays light, not a
way around the structure). ``export`` (CLI-side: headless set-up, lecture pack, ``--data`` files)
builds on ``gui``'s views and on ``attnviz.figures`` (registry and renderer); neither imports ``export``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attnviz

ROOT = Path(attnviz.__file__).parent
PACKAGES = ("gui", "figures", "export")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``path`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:  # attnviz.gui.views.base.BaseView -> attnviz.gui.views.base
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _imports(path, name, known) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_gui_never_imports_export():
    bad = {m: sorted(d for d in deps if d.startswith("attnviz.export"))
           for m, deps in _graph().items() if m.startswith(("attnviz.gui", "attnviz.figures"))}
    assert not {m: d for m, d in bad.items() if d}


def test_no_module_import_cycles_in_gui_figures_and_export():
    assert _cycles(_graph()) == []


def test_the_checker_sees_imports_inside_functions():
    graph = _graph()
    # app.run_app imports the main window inside the function (start-up stays light)
    assert "attnviz.gui.window.main_window" in graph["attnviz.gui.app"]
    assert "attnviz.figures.registry" in graph["attnviz.figures.scenes"]  # the figures are in the graph too
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
