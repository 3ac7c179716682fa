"""Where a command may write: the one place every output path is checked.

Rules (a command's ``--force`` lifts the second and third, never the first):

1. never over one of the command's inputs (:func:`attnviz.io.paths.refuse_overwrite`): every file and
   model folder the command, its scene or its lesson names; never into a Hugging Face cache's blob store;
2. never into a model folder: the bundled models, the Hugging Face cache, and any folder holding a
   model's ``config.json`` and weights (found by content, so another model than ``--model`` is safe too);
3. never over a non-empty file attnviz did not write: its own earlier output still as it wrote it (the
   ownership record, :mod:`attnviz.io.ledger`; a lecture pack's figures included) or a saved trace (by its
   content marker, :mod:`attnviz.io.trace_marker`) may be replaced; a user's own file may not.

A link is judged at both ends: where it lies and where it points must both pass. Nothing a file can say
about itself (a generator tag, array names) grants the right to replace it.

Commands check their outputs before any work (:func:`check_target`) and run inside :func:`output_policy`,
which makes :func:`attnviz.io.atomic.write_atomic` check every file it is about to write: the names a
command derives (``fig_L0_H1.png``, a pack's figures) are held to the same rules.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass
from pathlib import Path

from attnviz.io.paths import OverwriteError, lexical_path, refuse_overwrite
from attnviz.io.trace_marker import has_trace_marker

__all__ = ["WEIGHT_FILES", "PACK_MARKER", "PACK_MARKER_TAG", "is_model_folder", "protected_folder_of",
           "made_by_attnviz", "check_target", "check_pack_folder", "output_policy", "guard_write", "pack_index_owned",
           "check_targets", "api_output"]

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index")
PACK_MARKER = "attnviz lecture pack"
PACK_MARKER_TAG = f"<meta name='generator' content='{PACK_MARKER}'>"  # in every pack's index.html head


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


def _refuse_shared_blob(path) -> None:
    """Never write into a Hugging Face cache's blob store, even with --force: every snapshot of every
    revision links to the same blob, so one write would change models the user never named."""
    real = _real(path)
    for root in _hf_cache_roots():
        r = _real(root)
        if r in real.parents and len(real.relative_to(r).parts) >= 2 and real.relative_to(r).parts[1] == "blobs":
            raise OverwriteError(f"{path} leads into the Hugging Face cache's shared files ({real.parent}): "
                                 "choose an output elsewhere")


def check_targets(paths) -> None:
    """Check every path in ``paths`` against the running command's policy before the first is written
    (a lecture pack refused over one file must not have written the others)."""
    for p in paths:
        guard_write(p)


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


def pack_index_owned(folder) -> bool:
    """True when ``folder`` holds an ``index.html`` an earlier lecture pack wrote and nobody changed since.

    Decided by the ownership record (:mod:`attnviz.io.ledger`), never by what the page says: a generator
    tag or a link anyone can write into a page grants nothing.
    """
    from attnviz.io.ledger import written_by_attnviz

    return written_by_attnviz(Path(folder) / "index.html")


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
    # a trace attnviz saved, by its content marker (not by array names any .npz may carry)
    return p.suffix.lower() == ".npz" and has_trace_marker(p)


@dataclass(frozen=True)
class _Policy:
    force: bool
    inputs: tuple
    folders: tuple


_POLICY: contextvars.ContextVar[_Policy | None] = contextvars.ContextVar("attnviz_output_policy", default=None)


def check_target(path, inputs=(), folders=(), force: bool = False) -> None:
    """Raise :class:`OverwriteError` (one line) when a command must not write the file ``path``."""
    refuse_overwrite(path, inputs=inputs, folders=folders)
    _refuse_shared_blob(path)
    if force:
        return
    if Path(path).is_dir():
        return  # the caller says "is a directory"
    # a link is judged at both ends: where it lies (a Hugging Face snapshot's links) and where it points
    folder = protected_folder_of(lexical_path(path).parent) or protected_folder_of(_real(path).parent)
    if folder is not None:
        raise OverwriteError(f"{path} is inside the model directory {folder}: choose an output elsewhere "
                             "(or --force)")
    if os.path.lexists(path) and not made_by_attnviz(path):
        raise OverwriteError(f"{path} exists and attnviz did not write it: choose another name, or --force "
                             "to replace it")


def check_pack_folder(folder, inputs=(), folders=(), force: bool = False) -> None:
    """A lecture pack goes into a new or empty folder, or one an earlier pack made (its index.html still as
    attnviz wrote it, by the ownership record); each file it writes is checked again before the first write."""
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
    if f.is_dir() and any(f.iterdir()) and not pack_index_owned(f):
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


@contextlib.contextmanager
def api_output(path, force: bool = False, inputs=(), folders=()):
    """The Python API's writes (``Traced.save``, ``Figure.save``, ``HtmlFigure.save``) by the CLI's rules.

    ``path`` is checked now (:func:`check_target`); every file written inside the block is checked too.
    A failed write (missing folder, full disk) is one :class:`attnviz.errors.AttnvizError` line.
    """
    from attnviz.errors import AttnvizError
    from attnviz.io.atomic import friendly_os_error

    inputs = tuple(p for p in inputs if isinstance(p, (str, os.PathLike)))
    folders = tuple(f for f in folders if isinstance(f, (str, os.PathLike)))
    p = Path(path).expanduser()
    if p.is_dir():
        raise AttnvizError(f"{path} is a folder, not a file name")
    if not p.parent.is_dir():
        raise AttnvizError(f"cannot write {path}: folder {p.parent} does not exist")
    check_target(p, inputs, folders, force)
    with output_policy(force, inputs, folders):
        try:
            yield p
        except OSError as exc:
            raise AttnvizError(f"cannot write {path}: {friendly_os_error(exc)}") from None
