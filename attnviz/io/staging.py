"""Write a set of files into a folder all or nothing: a lecture pack that cannot finish leaves the folder
as it found it.

Every target is checked against the running command's output policy before the first file is written
(:func:`attnviz.io.outputs.check_targets`); the files are then made in a hidden staging folder inside the
target folder, and only when every one of them exists are they copied into place, each through
:func:`attnviz.io.atomic.write_atomic` (so links, the ownership record and the policy apply as for any file).
A failure while making them removes the staging folder, and the target folder if this call created it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["staged_files", "STAGE_PREFIX"]

STAGE_PREFIX = ".attnviz-staging-"


@contextlib.contextmanager
def staged_files(directory, names):
    """Yield ``stage(name) -> Path`` (where to write the file ``name``); on success the files move into
    ``directory``.

    Parameters
    ----------
    directory : folder the files are for (created when absent; removed again on failure if it was).
    names : every file name that will be written, checked before anything is written.
    """
    from attnviz.io.atomic import write_atomic
    from attnviz.io.outputs import check_targets

    directory = Path(directory)
    names = list(dict.fromkeys(str(n) for n in names))
    for name in names:
        if Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")  # a programming error, never user input
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale_stages(directory)
    try:
        check_targets(directory / n for n in names)
        stage = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-", dir=directory))
    except BaseException:
        if created:
            _remove_empty(directory)
        raise
    try:
        yield lambda name: stage / name
        made = [n for n in names if (stage / n).is_file()]
        check_targets(directory / n for n in made)  # again: the folder may have changed while rendering
        for n in made:
            write_atomic(directory / n, lambda tmp, src=stage / n: shutil.copyfile(src, tmp))
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if created:
            _remove_empty(directory)
        raise
    shutil.rmtree(stage, ignore_errors=True)


def _remove_empty(directory: Path) -> None:
    with contextlib.suppress(OSError):
        directory.rmdir()  # only when empty: never a file someone else put there meanwhile


def _remove_stale_stages(directory: Path) -> None:
    """Remove staging folders a killed pack left (``.attnviz-staging-PID-…`` whose process is gone)."""
    for stage in directory.glob(f"{STAGE_PREFIX}*"):
        pid = stage.name[len(STAGE_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its writer is alive (another pack into the same folder)
        except ProcessLookupError:
            shutil.rmtree(stage, ignore_errors=True)
        except OSError:
            continue  # someone else's process: not ours to judge
