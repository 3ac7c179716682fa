"""Where attnviz keeps what it can always make again (e.g. the GUI's import plans): the user's cache folder.

``ATTNVIZ_CACHE_DIR`` overrides; otherwise ``$XDG_CACHE_HOME/attnviz`` (default ``~/.cache/attnviz``) on
Linux and other Unix, ``~/Library/Caches/attnviz`` on macOS, ``%LOCALAPPDATA%\\attnviz\\cache`` on Windows.
Everything in it may be deleted at any time: readers check what they read and rebuild it when in doubt.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """The per-user cache folder of attnviz (not created here)."""
    env = os.environ.get("ATTNVIZ_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "attnviz" / "cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "attnviz"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"  # XDG: a relative value = unset
    return base / "attnviz"
