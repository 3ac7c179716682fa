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


def write_atomic(path: str | os.PathLike, write) -> None:
    """Call ``write(tmp_path)`` and rename the result onto ``path``; no partial file is ever left.

    A failure leaves any existing file at ``path`` untouched.
    """
    path = Path(path)
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
