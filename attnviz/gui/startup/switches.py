"""Each start-up mechanism can be switched off, to measure what it buys or to rule it out when something breaks.

One naming scheme: ``ATTNVIZ_STARTUP_<NAME>=0`` switches mechanism ``name`` off (``0``, ``off``, ``no`` or
``false``; anything else, or unset, leaves it on), e.g. ``ATTNVIZ_STARTUP_NATIVE_PRELOAD=0 attnviz``.
``attnviz bench --only startup`` launches the app with each one off in turn, interleaved with launches with all
on, and prints what each buys. Qt-free and import-light: the CLI reads it before PySide6 is imported.
"""

from __future__ import annotations

import os

__all__ = ["MECHANISMS", "enabled", "env_name"]

# name → what switching it off costs (measured by `attnviz bench --only startup`; see attnviz.gui.startup)
MECHANISMS = {
    "native_preload": "torch's native libraries are loaded without the interpreter lock (else: the GUI thread "
                      "freezes while torch loads after the first map)",
    "stepped_import": "pyqtgraph and the views are imported a statement/module per event-loop turn (else: one "
                      "long freeze before the first map)",
    "qt_warm_up": "PySide6's lazily built types are created a few dozen per turn before pyqtgraph's import "
                  "(else: pyqtgraph's import creates them all in one turn)",
    "plan_cache": "the import plans are read from the user's cache (else: made from the sources every launch)",
}
_OFF = {"0", "off", "no", "false"}


def env_name(name: str) -> str:
    """The environment variable that switches mechanism ``name`` off."""
    return f"ATTNVIZ_STARTUP_{name.upper()}"


def enabled(name: str) -> bool:
    """False when ``ATTNVIZ_STARTUP_<NAME>`` says off (read at each call: a test may change it)."""
    if name not in MECHANISMS:
        raise KeyError(f"unknown start-up mechanism {name!r}")
    return os.environ.get(env_name(name), "").strip().lower() not in _OFF
