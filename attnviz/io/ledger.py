"""Which files attnviz wrote itself, so re-running a command may replace its own result but nothing else.

A small record in the cache folder (:func:`attnviz.io.cache.cache_dir`): real path → the file's device,
inode, size and modification time right after attnviz renamed it into place. A file still matching its
record is attnviz's; one the user edited since (another mtime or size) or copied from elsewhere is theirs.
Losing the record (the cache may be deleted at any time) only means ``--force`` is asked for once: it
never lets a file through that attnviz did not write.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["record_written", "written_by_attnviz", "LEDGER_NAME", "MAX_ENTRIES"]

LEDGER_NAME = "written-files.json"
MAX_ENTRIES = 1000  # the most recent writes (~150 kB); an older output needs --force to be replaced
_MAX_BYTES = 2_000_000  # a ledger larger than this is not ours: ignored


def _ledger_path() -> Path:
    from attnviz.io.cache import cache_dir

    return cache_dir() / LEDGER_NAME


def _stamp(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _read() -> dict:
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    try:
        doc = read_json_file(_ledger_path(), _MAX_BYTES, 4, what="ownership record")
    except JsonLimitError:
        return {}  # unreadable or not ours: nothing counts as attnviz's (only asks for --force)
    return doc if isinstance(doc, dict) else {}


def record_written(path) -> None:
    """Remember that attnviz just wrote ``path`` (never fails: a lost record only asks for --force later)."""
    real = os.path.realpath(path)
    p = _ledger_path()
    if Path(os.path.realpath(p.parent)) in Path(real).parents:
        return  # the cache's own files (import plans, this record) are nobody's output
    if any(part.startswith(".attnviz-staging-") for part in Path(real).parts):
        return  # a file staged for a pack (attnviz.io.staging): recorded where it is copied to
    stamp = _stamp(Path(real))
    if stamp is None:
        return
    doc = _read()
    doc.pop(real, None)
    doc[real] = stamp  # insertion order: the newest last, the oldest dropped first
    while len(doc) > MAX_ENTRIES:
        doc.pop(next(iter(doc)))
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.part")
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, p)
    except OSError:
        pass


def written_by_attnviz(path) -> bool:
    """True when ``path`` is a file attnviz wrote and nobody changed since."""
    real = os.path.realpath(path)
    stamp = _stamp(Path(real))
    return stamp is not None and _read().get(real) == stamp
