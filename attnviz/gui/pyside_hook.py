"""A cheaper answer to the question PySide6 asks about every module imported after it (issue 18).

PySide6 wraps ``__import__`` for its ``from __feature__ import snake_case`` switches: the first time any
module is imported it decides whether that module "uses PySide" by reading the module's whole source with
``inspect.getsource`` (through ``linecache``, which then keeps every line in memory). For the ~900
modules of ``import torch`` that is 0.2–0.4 s of CPU with the interpreter lock held, on a worker while the
GUI thread waits for the lock, plus ~16 MB of cached source; for pyqtgraph and the views another ~0.1 s on
the GUI thread, on the way to the first attention map.

:func:`install_cheap_feature_check` replaces that check with the same test (does the source contain
"PySide6"?) made on the file's bytes, read once and not cached. A module without a plain ``.py`` file
(frozen, zipped, compiled-only) still gets PySide6's own check, so every answer is the one PySide6 would
give. Should PySide6 change its internals, nothing is replaced and it works as before.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["install_cheap_feature_check", "cheap_check_installed"]

log = logging.getLogger(__name__)

_MARK = "_attnviz_cheap_check"


def _feature_globals() -> dict | None:
    """The globals PySide6's import hook looks ``_mod_uses_pyside`` up in (None: not as expected)."""
    feature = sys.modules.get("shibokensupport.feature") or sys.modules.get("PySide6.support.feature")
    hook = getattr(feature, "feature_imported", None)
    scope = getattr(hook, "__globals__", None)
    if not isinstance(scope, dict) or not callable(scope.get("_mod_uses_pyside")):
        return None
    return scope


def cheap_check_installed() -> bool:
    """True when PySide6's per-module source check is the cheap one."""
    scope = _feature_globals()
    return scope is not None and getattr(scope["_mod_uses_pyside"], _MARK, False)


def install_cheap_feature_check() -> bool:
    """Make PySide6's "does this module use PySide?" check read the raw file instead of ``inspect``.

    Returns True if it is installed (now or before); False if PySide6 is not imported yet or its
    internals are not the expected ones (then nothing changed).
    """
    scope = _feature_globals()
    if scope is None:
        log.debug("PySide6's feature hook not found: its module check stays as it is")
        return False
    original = scope["_mod_uses_pyside"]
    if getattr(original, _MARK, False):
        return True

    def mod_uses_pyside(module) -> bool:
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        if getattr(spec, "has_location", False) and isinstance(origin, str) and origin.endswith(".py"):
            try:
                with open(origin, "rb") as fh:
                    return b"PySide6" in fh.read()
            except OSError:
                pass
        return original(module)  # anything unusual: PySide6's own answer

    setattr(mod_uses_pyside, _MARK, True)
    mod_uses_pyside.__wrapped__ = original
    scope["_mod_uses_pyside"] = mod_uses_pyside
    return True
