"""Logging for the command line and the app: warnings on standard error, a log file in the user's data folder.

``configure_logging(verbose)`` is called once by ``attnviz.cli.main``:

- standard error gets WARNING and above (``--verbose``: DEBUG and above) as ``attnviz: level: message``;
- ``attnviz.log`` in :func:`data_dir` gets INFO and above (``--verbose``: DEBUG) with timestamps,
  rotated at 1 MB with two old copies, so a lecturer can send it along with a bug report.

Qt-free: the data folder follows each platform's convention without ``QStandardPaths``.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

__all__ = ["configure_logging", "data_dir", "log_path", "LOG_NAME"]

LOG_NAME = "attnviz.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 2
_MARK = "_attnviz_handler"  # set on the handlers this module adds, so a second call replaces them


def data_dir() -> Path:
    """The per-user data folder of attnviz (not created here).

    ``ATTNVIZ_DATA_DIR`` overrides; otherwise ``$XDG_DATA_HOME/attnviz`` (default
    ``~/.local/share/attnviz``) on Linux and other Unix, ``~/Library/Application Support/attnviz`` on
    macOS, ``%LOCALAPPDATA%\\attnviz`` on Windows — where ``QStandardPaths.AppLocalDataLocation`` puts it.
    """
    env = os.environ.get("ATTNVIZ_DATA_DIR")
    if env:
        return Path(env).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "attnviz"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "attnviz"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"  # XDG: relative = unset
    return base / "attnviz"


def log_path() -> Path:
    """Where the log file is written: ``data_dir() / "attnviz.log"``."""
    return data_dir() / LOG_NAME


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (tests and pipes replace it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns it; the property decides
        pass


class _QuietFileHandler(logging.handlers.RotatingFileHandler):
    """The log file, which stops quietly when it cannot be written (a full disk, a file-size limit).

    logging's default prints "--- Logging error ---" and a traceback on standard error for every failed
    record; a full disk must instead end in the command's own one-line message.
    """

    def handleError(self, record) -> None:  # noqa: N802 (logging's name)
        logging.getLogger("attnviz").removeHandler(self)
        try:
            self.close()
        except OSError:
            pass


def configure_logging(verbose: bool = False, log_file: bool = True) -> Path | None:
    """Set up the ``attnviz`` logger; returns the log file's path, or None when it cannot be written.

    Calling it again replaces what an earlier call set up (no doubled lines).
    """
    logger = logging.getLogger("attnviz")
    for handler in [h for h in logger.handlers if getattr(h, _MARK, False)]:
        logger.removeHandler(handler)
        handler.close()
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)

    console = _StderrHandler()
    console.setLevel(logging.DEBUG if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("attnviz: %(levelname)s: %(message)s"))
    setattr(console, _MARK, True)
    logger.addHandler(console)

    if not log_file:
        return None
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = _QuietFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8",
                                    delay=True)
    except OSError as exc:  # a read-only home: run without a log file, and say so once
        logger.warning("no log file (%s): %s", path, exc.strerror or exc)
        return None
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    setattr(handler, _MARK, True)
    logger.addHandler(handler)
    return path
