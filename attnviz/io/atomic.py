"""Write a file under a temporary name and rename it into place, so no reader ever sees half a file.

The temporary file is ``.NAME.PID-RANDOM.part`` beside the target: a later write of the same name removes
what a killed write left behind (its process is gone; names without a pid: after ``STALE_SECONDS``).
A target that is a symbolic link is written *through*: the file it points to is replaced and the link
stays (replacing the link by a file would cut it from what the user linked to, e.g. a slide deck's figure).
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

__all__ = ["write_atomic", "part_owner", "STALE_SECONDS", "friendly_os_error", "UMASK"]


def _read_umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


UMASK = _read_umask()  # read once at import: os.umask briefly changes it for every thread
# mkstemp makes owner-only files; written files should get the usual permissions instead
_FILE_MODE = 0o666 & ~UMASK


STALE_SECONDS = 600  # a temporary file without a pid this old belongs to a write that was killed
_PART = re.compile(r"\.(\d+)-[^.]*\.part$")


def part_owner(path) -> int | None:
    """The pid of the process writing temporary file ``path``; None when that write is over (killed).

    Names this module makes carry the pid; older names without one count as alive for ``STALE_SECONDS``.
    """
    import time

    m = _PART.search(Path(path).name)
    if m:
        pid = int(m[1])
        if pid == os.getpid():
            return pid
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:  # exists, someone else's
            return pid
        return pid
    try:
        return os.getpid() if time.time() - Path(path).stat().st_mtime < STALE_SECONDS else None
    except OSError:
        return None


def _remove_stale_parts(path: Path) -> None:
    """Remove what killed earlier writes of ``path`` left (``.NAME.*.part`` whose writer is gone)."""
    import glob

    for tmp in (path.parent or Path(".")).glob(f".{glob.escape(path.name)}.*.part"):
        try:
            if part_owner(tmp) is None:
                tmp.unlink()
        except OSError:
            pass  # gone already, or not ours to remove


def friendly_os_error(exc: OSError) -> str:
    """The reason of a failed write in words a user can act on (a full disk says so, whatever the library said)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space left on the device"
    return exc.strerror or str(exc) or type(exc).__name__


def write_atomic(path: str | os.PathLike, write) -> None:
    """Call ``write(tmp_path)`` and rename the result onto ``path``; no partial file is ever left.

    A failure leaves any existing file at ``path`` untouched. A symbolic link is written through (see the
    module notes). Inside a command's :func:`attnviz.io.outputs.output_policy` the target is checked first.
    """
    from attnviz.io.ledger import record_written
    from attnviz.io.outputs import guard_write

    path = Path(path)
    guard_write(path)  # the path as given: the policy judges a link at both ends
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    _remove_stale_parts(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".part", dir=path.parent or ".")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    record_written(path)
