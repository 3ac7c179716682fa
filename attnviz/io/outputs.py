"""Where a command may write: the one place every output path is checked.

Rules (a command's ``--force`` lifts the second and third, never the first):

1. never over one of the command's inputs (:func:`attnviz.io.paths.refuse_overwrite`);
2. never into a model folder: the bundled models, the Hugging Face cache, and any folder holding a
   model's ``config.json`` and weights (found by content, so another model than ``--model`` is safe too);
3. never over a non-empty file attnviz did not write: its own earlier output (:mod:`attnviz.io.ledger`),
   a saved trace, or a figure an earlier lecture pack made (named in the pack's marked index) may be
   replaced; a user's own file may not.

Commands check their outputs before any work (:func:`check_target`) and run inside :func:`output_policy`,
which makes :func:`attnviz.io.atomic.write_atomic` check every file it is about to write: the names a
command derives (``fig_L0_H1.png``, a pack's figures) are held to the same rules.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from attnviz.io.paths import OverwriteError, refuse_overwrite

__all__ = ["WEIGHT_FILES", "PACK_MARKER", "PACK_MARKER_TAG", "is_model_folder", "protected_folder_of",
           "made_by_attnviz", "check_target", "check_pack_folder", "output_policy", "guard_write", "pack_files"]

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index")
PACK_MARKER = "attnviz lecture pack"
PACK_MARKER_TAG = f"<meta name='generator' content='{PACK_MARKER}'>"  # in every pack's index.html head
_INDEX_MAX_BYTES = 4_000_000


def is_model_folder(folder) -> bool:
    """A folder holding a model's ``config.json`` and its weights (attnviz or Hugging Face, by content)."""
    f = Path(folder)
    try:
        if not (f / "config.json").is_file():
            return False
        if any((f / name).exists() for name in WEIGHT_FILES):
            return True
        return any(f.glob("*.safetensors"))
    except OSError:
        return False


def _hf_cache_roots() -> list[Path]:
    roots = [os.environ.get("HF_HUB_CACHE"), os.environ.get("TRANSFORMERS_CACHE")]
    if os.environ.get("HF_HOME"):
        roots.append(os.path.join(os.environ["HF_HOME"], "hub"))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    roots.append(os.path.join(xdg, "huggingface", "hub"))
    return [Path(r) for r in roots if r]


def _real(path) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def protected_folder_of(path) -> Path | None:
    """The model folder (or model collection) that ``path`` lies in, or None when it is free to write."""
    from attnviz.io.assets import assets_dir

    real = _real(path)
    for root in [assets_dir() / "models", *_hf_cache_roots()]:
        r = _real(root)
        if real == r or r in real.parents:
            return root
    for folder in [real, *real.parents]:
        if is_model_folder(folder):
            return folder
    return None


def pack_files(folder) -> set[str] | None:
    """The file names an earlier lecture pack in ``folder`` wrote (from its marked index), or None."""
    index = Path(folder) / "index.html"
    try:
        if not index.is_file() or index.stat().st_size > _INDEX_MAX_BYTES:
            return None
        page = index.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if PACK_MARKER_TAG not in page:
        return None
    import html

    names = {html.unescape(m) for m in re.findall(r"(?:href|src)='([^'/\\]+)'", page)}
    return names | {"index.html", "index.md"}


def _is_trace(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return {"meta.npy", "tokens.npy"} <= set(zf.namelist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def made_by_attnviz(path) -> bool:
    """True when ``path`` may be replaced without ``--force``: empty, or attnviz's own unchanged output."""
    from attnviz.io.ledger import written_by_attnviz

    p = _real(path)
    try:
        if p.stat().st_size == 0:
            return True
    except OSError:
        return True  # nothing there
    if written_by_attnviz(p):
        return True
    if p.suffix.lower() == ".npz" and _is_trace(p):
        return True
    owned = pack_files(p.parent)
    return owned is not None and p.name in owned


@dataclass(frozen=True)
class _Policy:
    force: bool
    inputs: tuple
    folders: tuple


_POLICY: contextvars.ContextVar[_Policy | None] = contextvars.ContextVar("attnviz_output_policy", default=None)


def check_target(path, inputs=(), folders=(), force: bool = False) -> None:
    """Raise :class:`OverwriteError` (one line) when a command must not write the file ``path``."""
    refuse_overwrite(path, inputs=inputs, folders=folders)
    if force:
        return
    if Path(path).is_dir():
        return  # the caller says "is a directory"
    folder = protected_folder_of(_real(path).parent)  # where a symlink points, not where it lies
    if folder is not None:
        raise OverwriteError(f"{path} is inside the model directory {folder}: choose an output elsewhere "
                             "(or --force)")
    if os.path.lexists(path) and not made_by_attnviz(path):
        raise OverwriteError(f"{path} exists and attnviz did not write it: choose another name, or --force "
                             "to replace it")


def check_pack_folder(folder, inputs=(), folders=(), force: bool = False) -> None:
    """A lecture pack goes into a new or empty folder, or one an earlier pack made (its marked index)."""
    refuse_overwrite(folder, inputs=inputs, folders=folders)
    f = Path(folder)
    if f.exists() and not f.is_dir():
        raise OverwriteError(f"{folder} is a file, not a folder for the lecture pack")
    if force:
        return
    where = protected_folder_of(f)
    if where is not None:
        raise OverwriteError(f"{folder} is inside the model directory {where}: choose an output elsewhere "
                             "(or --force)")
    if f.is_dir() and any(f.iterdir()) and pack_files(f) is None:
        raise OverwriteError(f"{folder} holds files no lecture pack made: choose a new or empty folder, "
                             "or --force to write into it")


@contextlib.contextmanager
def output_policy(force: bool = False, inputs=(), folders=()):
    """Within the block, :func:`guard_write` (called by every ``write_atomic``) applies :func:`check_target`."""
    token = _POLICY.set(_Policy(bool(force), tuple(inputs), tuple(folders)))
    try:
        yield
    finally:
        _POLICY.reset(token)


def guard_write(path) -> None:
    """Check ``path`` against the policy of the running command (none in the app: its dialogs ask)."""
    policy = _POLICY.get()
    if policy is not None:
        check_target(path, policy.inputs, policy.folders, policy.force)
