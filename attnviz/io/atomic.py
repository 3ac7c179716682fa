"""Write a file under a temporary name and rename it into place, so no reader ever sees half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def _read_umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


# mkstemp makes owner-only files; written files should get the usual permissions instead
_FILE_MODE = 0o666 & ~_read_umask()


STALE_SECONDS = 600  # a temporary file this old belongs to a write that was killed, not one in progress


def _remove_stale_parts(path: Path) -> None:
    """Remove what killed earlier writes of ``path`` left (``.NAME.*.part`` older than STALE_SECONDS)."""
    import glob
    import time

    now = time.time()
    for tmp in (path.parent or Path(".")).glob(f".{glob.escape(path.name)}.*.part"):
        try:
            if now - tmp.stat().st_mtime > STALE_SECONDS:
                tmp.unlink()
        except OSError:
            pass  # gone already, or not ours to remove


def write_atomic(path: str | os.PathLike, write) -> None:
    """Call ``write(tmp_path)`` and rename the result onto ``path``; no partial file is ever left.

    A failure leaves any existing file at ``path`` untouched. Temporary files that killed writes of the
    same ``path`` left behind (older than ``STALE_SECONDS``) are removed first.
    """
    path = Path(path)
    _remove_stale_parts(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
