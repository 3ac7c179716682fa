"""Import a big package a small piece at a time, so the GUI thread never freezes for the whole import.

Why: pyqtgraph and the attention views must be imported on the GUI thread (they define Qt classes;
PySide6 builds its types and enums lazily, and a worker creating them while the GUI thread uses Qt is a
race we do not take). Imported in one go, pyqtgraph froze the event loop for 0.5–0.9 s at start-up.

How: :func:`import_plan` (Qt-free, plain file reading: run it on a worker) reads the package's source and
lists its own modules leaves first, in the order their top-level imports need them; the package's
``__init__`` is split into its top-level statements, each preceded by the modules it needs. The GUI thread
then runs one step per event-loop turn (:class:`SteppedImport`). Every module step is an ordinary
``importlib.import_module``, so a plan that guessed an order wrong only makes one step longer, never the
result different. While the package is half-built, asking it for a name it does not have yet finishes
the import at once (a module ``__getattr__``), so nothing can see a half-imported package.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import logging
import re
import sys
from pathlib import Path

__all__ = ["import_plan", "SteppedImport"]

log = logging.getLogger(__name__)


def _module_file(package_dir: Path, top: str, name: str) -> Path | None:
    """The source file of ``name`` (a module of package ``top`` in ``package_dir``), or None."""
    parts = name[len(top) + 1:].split(".") if name != top else []
    base = package_dir.joinpath(*parts) if parts else package_dir
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


# an unconditional top-level import: a line at column 0 (imports inside if/try/def are left to the step
# that runs them; a multi-line "from x import (a,\n b)" is joined first)
_IMPORT_LINE = re.compile(r"^(?:from\s+(\.*)([\w.]*)\s+import\s+\(?([^)#\n]*)|import\s+([\w., ]+))", re.M)
_PARENTHESISED = re.compile(r"(import\s*)\(([^)]*)\)")


def _imported_names(source: str, module: str, is_package: bool) -> list[str]:
    """Absolute names of the modules ``source``'s unconditional top-level imports name (candidates: some
    are attributes, which the caller drops as they have no file)."""
    source = _PARENTHESISED.sub(lambda m: m.group(1) + m.group(2).replace("\n", " "), source)
    out: list[str] = []
    for dots, name, names, plain in _IMPORT_LINE.findall(source):
        if plain:
            out.extend(n.split(" as ")[0].strip() for n in plain.split(","))
            continue
        if dots:
            package = module if is_package else module.rpartition(".")[0]
            for _ in range(len(dots) - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{name}" if name else package
        else:
            base = name
        out.append(base)
        out.extend(f"{base}.{n.split(' as ')[0].strip()}" for n in names.split(",")
                   if n.strip() and n.strip() != "*")
    return out


def import_plan(top: str, within: str | None = None, extra: tuple[str, ...] = ()) -> list[tuple[str, object]]:
    """The steps that import package ``top`` piece by piece (Qt-free: reads files only, imports nothing).

    Parameters
    ----------
    top : the package to import.
    within : the package whose modules are stepped through (default ``top``; e.g. ``attnviz.gui`` for
        ``attnviz.gui.views``, whose views import widgets of ``attnviz.gui``); it must be imported already
        unless it is ``top``. Modules outside it are imported by the step that needs them.
    extra : further modules of ``within`` to import after ``top``, each after what it needs.

    Returns
    -------
    list of ``("module", name)`` (import that module of the package) and ``("statement", code)`` (run one
    top-level statement of the package's ``__init__``, compiled) steps, leaves first; an empty list when
    the package is imported already or its source cannot be read (then import it the ordinary way).
    """
    within = within or top
    if top in sys.modules or (within != top and within not in sys.modules):
        return []
    spec = importlib.util.find_spec(top)  # its parents are imported already: finding it imports nothing
    root = importlib.util.find_spec(within) if within != top else spec
    if spec is None or not spec.origin or not spec.submodule_search_locations or root is None or not root.origin:
        return []
    package_dir = Path(root.origin).parent
    sources: dict[str, str | None] = {}

    def source(name: str) -> str | None:
        if name not in sources:
            path = _module_file(package_dir, within, name)
            try:
                sources[name] = path.read_text(encoding="utf-8") if path else None
            except (OSError, UnicodeDecodeError):
                sources[name] = None
        return sources[name]

    done: set[str] = {top}
    steps: list[tuple[str, object]] = []

    def visit_all(names: list[str]) -> None:
        for dep in names:
            for i in range(within.count(".") + 2, dep.count(".") + 2):  # parents first
                visit(".".join(dep.split(".")[:i]))

    def visit(name: str) -> None:
        # depth first, leaves first; a name on the current path counts as done (Python's own rule for cycles)
        if name in done or name in sys.modules or not name.startswith(within + "."):
            return
        text = source(name)
        if text is None:
            return  # not a module of ours (an attribute imported with "from . import x", or unreadable)
        done.add(name)
        visit_all(_imported_names(text, name, _module_file(package_dir, within, name).name == "__init__.py"))
        steps.append(("module", name))

    init = source(top)
    try:
        statements = ast.parse(init or "", spec.origin).body
    except SyntaxError:
        return []
    if not statements:
        return []
    lines = init.splitlines()
    for stmt in statements:  # the package's own __init__: statement by statement
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            visit_all(_imported_names("\n".join(lines[stmt.lineno - 1:stmt.end_lineno]), top, True))
        steps.append(("statement", compile(ast.Module([stmt], []), spec.origin, "exec")))
    visit_all(list(extra))
    return steps


class SteppedImport:
    """Runs an :func:`import_plan` one step at a time (GUI thread): ``step()`` until it returns False.

    The half-built package is in ``sys.modules`` meanwhile, as during any import; a module-level
    ``__getattr__`` finishes the import when someone asks it for a name it does not have yet.
    A step that fails is left to the package's own statements, which then import it the ordinary way
    (and raise what an ordinary import would raise).
    """

    def __init__(self, top: str, plan: list[tuple[str, object]]):
        self.top = top
        self._steps = list(plan)
        self._module = None
        self.done = not self._steps
        if self.done:
            importlib.import_module(top)  # already imported, or no plan: the ordinary way

    def _begin(self) -> None:
        spec = importlib.util.find_spec(self.top)
        module = importlib.util.module_from_spec(spec)
        spec._initializing = True  # what the import system sets while a module's body runs
        module.__getattr__ = self._finish_and_get
        sys.modules[self.top] = module
        self._module = module

    def _finish_and_get(self, name: str):
        if name.startswith("__"):  # dunder probes (copy, pickle, inspect) must not start an import
            raise AttributeError(name)
        if importlib.util.find_spec(f"{self.top}.{name}") is not None:
            # "from . import sub": the import system asks first, then imports the submodule itself
            raise AttributeError(name)
        self.finish()
        try:
            return self._module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.top!r} has no attribute {name!r}") from None

    def step(self) -> bool:
        """Run the next step; True while steps remain."""
        if self.done:
            return False
        if self._module is None:
            self._begin()
        kind, what = self._steps.pop(0)
        try:
            if kind == "module":
                if what not in sys.modules:
                    try:
                        importlib.import_module(what)
                    except ImportError as exc:  # the plan guessed early: the package's statement imports it
                        log.debug("stepped import of %s deferred: %s", what, exc)
            else:
                exec(what, self._module.__dict__)  # noqa: S102 - the package's own compiled statement
        except BaseException:
            self._abort()
            raise
        if not self._steps:
            self._end()
        return not self.done

    def finish(self) -> None:
        """Run every remaining step now."""
        while self.step():
            pass

    def _end(self) -> None:
        self.done = True
        if self._module.__dict__.get("__getattr__") == self._finish_and_get:  # not one the package defined
            del self._module.__dict__["__getattr__"]
        self._module.__spec__._initializing = False

    def _abort(self) -> None:
        # as a failed ordinary import: the package is not left half-built in sys.modules
        self.done = True
        self._steps.clear()
        if sys.modules.get(self.top) is self._module:
            del sys.modules[self.top]
