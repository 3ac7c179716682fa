"""Import plans kept on disk between launches, so start-up need not read a package's source every time.

Qt-free (a worker's job, like :func:`.stepped_import.import_plan`). Making pyqtgraph's plan
reads and scans ~250 source files: ~90 ms of CPU on a worker that holds the interpreter lock while the
GUI thread needs it for the first map, and the GUI thread then waited for the plan. The plan depends
only on the package's source files, so it is stored with a key made of the Python version and each
source file's name, size and modification time (like Python's own ``__pycache__``): any edit, upgrade
or move makes a new plan. A cached plan is only ever a guess at a good order (see
:mod:`attnviz.gui.startup.stepped_import`): a stale one could only make a step longer, never an import different.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import marshal
import os
import sys
import types
from pathlib import Path

from attnviz.gui.startup.stepped_import import import_plan
from attnviz.gui.startup.switches import enabled
from attnviz.io.atomic import write_atomic
from attnviz.io.cache import cache_dir

__all__ = ["cached_import_plan", "source_fingerprint"]

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the plan's layout changes
KEEP = 4  # plans kept per package


def source_fingerprint(package_dir: Path) -> str:
    """A digest of the names, sizes and modification times of every ``.py`` file under ``package_dir``."""
    digest = hashlib.blake2b(digest_size=16)
    for root, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(path, package_dir)}\0{st.st_mtime_ns}\0{st.st_size}\n".encode())
    return digest.hexdigest()


def _valid(plan) -> bool:
    return isinstance(plan, list) and all(
        isinstance(step, tuple) and len(step) == 2
        and ((step[0] == "module" and isinstance(step[1], str))
             or (step[0] == "statement" and isinstance(step[1], types.CodeType)))
        for step in plan)


def cached_import_plan(top: str, within: str | None = None, extra: tuple[str, ...] = (),
                       folder: Path | None = None) -> list:
    """:func:`~attnviz.gui.startup.stepped_import.import_plan`, read from ``folder`` (default: the user's cache
    folder) when the package's sources are unchanged since it was made; otherwise made and stored there.
    A cache that cannot be read or written is only a slower start."""
    within = within or top
    if not enabled("plan_cache") or top in sys.modules or (within != top and within not in sys.modules):
        return import_plan(top, within, extra)  # nothing to plan, or nothing that can be planned
    root = importlib.util.find_spec(within)
    if root is None or not root.origin:
        return import_plan(top, within, extra)
    package_dir = Path(root.origin).parent
    key = hashlib.blake2b(repr((FORMAT, importlib.util.MAGIC_NUMBER, sys.version, top, within, tuple(extra),
                                str(package_dir), source_fingerprint(package_dir))).encode(),
                          digest_size=16).hexdigest()
    folder = Path(folder) if folder is not None else cache_dir() / "import-plans"
    path = folder / f"{top}-{key}.marshal"
    try:
        plan = marshal.loads(path.read_bytes())
        if _valid(plan):
            return plan
        log.debug("import plan %s is not a plan: made again", path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, EOFError, TypeError) as exc:
        log.debug("cannot read the import plan %s (%s): made again", path, exc)
    plan = import_plan(top, within, extra)
    if plan:
        _store(folder, path, top, plan)
    return plan


def _store(folder: Path, path: Path, top: str, plan: list) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda tmp: Path(tmp).write_bytes(marshal.dumps(plan)))
        # plans of sources since edited or upgraded are never read again: keep the newest few (two
        # environments with different versions may share this folder, and each keeps its own)
        plans = sorted(folder.glob(f"{top}-*.marshal"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in plans[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.debug("cannot store the import plan %s: %s", path, exc)
