"""pyqtgraph's copies of QtCore/QtGui/QtWidgets filled on demand instead of all at once (issue 18).

pyqtgraph keeps its own "mirror" modules ``pyqtgraph.Qt.QtCore``/``QtGui``/``QtWidgets`` and fills them
when it is imported with ``_copy_attrs``: ``setattr(mirror, name, getattr(PySide6_module, name))`` for every
name. PySide6 creates its types lazily, on first access, so that loop creates all of them (~1,000 types
and enums) although pyqtgraph and attnviz use about a hundred: measured here ~0.2 s of CPU on the GUI
thread on the way to the first attention map (``import pyqtgraph`` after QtWidgets: 0.42–0.50 s of CPU
against 0.25–0.27 s with this module).

:func:`install_lazy_mirrors` makes each mirror answer a name it does not hold yet from the PySide6 module
the first time it is asked (a module ``__getattr__``), and caches it, so every name resolves to the very
same object as before. While ``_copy_attrs`` itself asks "does the mirror have this name?" the answer
is yes without creating anything, so the copy loop skips the name. Any other question, including one from
a future pyqtgraph whose copy function is named differently, gets the real object: at worst the types are
created as before. Installed by :mod:`attnviz.gui` before anything imports pyqtgraph.

Thread note: a name first asked for through a mirror is created on the thread that asks. pyqtgraph is
imported and used on the GUI thread only (workers run Qt-free code), as PySide6 requires.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install_lazy_mirrors", "lazy_mirrors_active", "MIRRORS"]

# pyqtgraph's mirror module → the PySide6 module it copies
MIRRORS = {"pyqtgraph.Qt.QtCore": "PySide6.QtCore", "pyqtgraph.Qt.QtGui": "PySide6.QtGui",
           "pyqtgraph.Qt.QtWidgets": "PySide6.QtWidgets"}
_COPIER = ("pyqtgraph.Qt", "_copy_attrs")  # (module, function) whose "has it?" questions need no answer yet
_MARK = "_attnviz_lazy_mirror"


class _Deferred:
    """What ``_copy_attrs``'s ``hasattr`` sees for a name not created yet (it only tests for presence)."""

    __slots__ = ()


_DEFERRED = _Deferred()


def _make_lazy(mirror, source) -> None:
    def __getattr__(name: str):
        caller = sys._getframe(1)
        if (caller.f_code.co_name == _COPIER[1] and caller.f_globals.get("__name__") == _COPIER[0]
                and not name.startswith("__")):
            return _DEFERRED  # the copy loop's presence test: created when somebody really asks
        try:
            value = getattr(source, name)
        except AttributeError:
            raise AttributeError(f"module {mirror.__name__!r} has no attribute {name!r}") from None
        setattr(mirror, name, value)  # the next lookup is a plain dictionary hit
        return value

    def __dir__():
        return sorted(set(vars(mirror)) | set(dir(source)))

    mirror.__getattr__ = __getattr__
    mirror.__dir__ = __dir__
    setattr(mirror, _MARK, True)


class _MirrorFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Loads a mirror module as usual (pyqtgraph's empty package), then makes it lazy."""

    def __init__(self):
        self._loaders = {}  # mirror name → the loader that would have loaded it

    def find_spec(self, name, path, target=None):
        if name not in MIRRORS:
            return None
        sys.meta_path.remove(self)  # the ordinary finders locate pyqtgraph's own file
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        self._loaders[name] = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loaders[spec.name].create_module(spec)

    def exec_module(self, module) -> None:
        self._loaders[module.__name__].exec_module(module)
        _make_lazy(module, importlib.import_module(MIRRORS[module.__name__]))


def install_lazy_mirrors() -> bool:
    """Have pyqtgraph's Qt mirrors filled on demand. Returns False when pyqtgraph's Qt layer is imported
    already (then it stays as it is); a second call does nothing."""
    if any(isinstance(f, _MirrorFinder) for f in sys.meta_path):
        return True
    if "pyqtgraph.Qt" in sys.modules:
        return False
    sys.meta_path.insert(0, _MirrorFinder())
    return True


def lazy_mirrors_active() -> bool:
    """True when pyqtgraph is imported with lazy mirrors, or will be."""
    if "pyqtgraph.Qt.QtCore" in sys.modules:
        return bool(getattr(sys.modules["pyqtgraph.Qt.QtCore"], _MARK, False))
    return any(isinstance(f, _MirrorFinder) for f in sys.meta_path)
