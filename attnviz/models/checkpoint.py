"""Model directories: ``config.json`` + ``model.safetensors`` (+ ``snapshots.npz``), one unit, never unpickled.

``config.json`` holds ``format``, ``model`` (the ModelConfig), ``tokenizer`` (and ``tgt_tokenizer``),
``task``, ``labels``, ``history``, ``metrics`` and anything else the trainer records.

Why a folder swap (and not a hash manifest)
-------------------------------------------
Weights and config must never disagree, and a save that is killed must leave the previous checkpoint
loadable. A hash of the weights in config.json would detect a mismatch, but the previous weights would
already be overwritten. So a save writes every file into a fresh sibling folder ``.NAME.part-TAG`` (each file
fsynced), then swaps it in: ``NAME`` → ``.NAME.old-TAG``, ``.NAME.part-TAG`` → ``NAME``, then removes the old
folder (``os.replace`` cannot put a folder over a non-empty one, so two renames it is). At every instant
there is one complete checkpoint: ``NAME`` itself, or — killed between the two renames — ``.NAME.old-TAG``
beside the complete ``.NAME.part-TAG``. :func:`recover_checkpoint` (run by every load and every save) puts
the newest complete folder back at ``NAME`` and removes what earlier killed saves left behind.
Files of the old folder that the save does not write (notes of the user's) are carried over as hard links.

Before anything is built, :func:`attnviz.models.validate.validate_model_folder` checks the whole folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.errors import ModelLoadError
from attnviz.io import assets_dir, bundled_models
from attnviz.models.config import ModelConfig

__all__ = ["LoadedModel", "save_checkpoint", "load_checkpoint", "resolve_model_path", "recover_checkpoint",
           "FORMAT"]

FORMAT = 1
_PICKLES = ("pytorch_model.bin", "model.pt", "model.pth", "model.bin")


@dataclass
class LoadedModel:
    """A model ready to run: the torch module, its config, tokenizers and training record."""

    model: object
    config: ModelConfig
    info: dict
    tokenizer: object | None = None
    tgt_tokenizer: object | None = None
    path: Path | None = None
    device: object = None
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.info.get("name") or (self.path.name if self.path else "model")

    @property
    def task(self) -> str | None:
        return self.info.get("task")

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    @property
    def dtype(self) -> str:
        """The dtype the weights run in now ("float32", "float16", "bfloat16"): read from the parameters, so a
        float16 checkpoint that fell back to float32 on this device says float32."""
        first = next(iter(self.model.parameters()), None)
        return str(first.dtype).replace("torch.", "") if first is not None else "float32"


def resolve_model_path(name_or_dir: str | os.PathLike) -> Path:
    """A directory as given, or the bundled model of that name; clear error otherwise."""
    p = Path(name_or_dir).expanduser()
    if not p.exists() and p.name:
        recover_checkpoint(p)  # a save killed between its two renames left the folder under another name
    if p.is_dir():
        return p
    bundled = assets_dir() / "models" / str(name_or_dir)
    if bundled.is_dir():
        return bundled
    names = ", ".join(bundled_models()) or "none installed"
    raise ModelLoadError(f"unknown model {str(name_or_dir)!r}: not a directory and not a bundled model ({names})")


_STAGE_HOOK = None  # tests set this to stop (SIGKILL) a save at a named stage; never set in the program


def _stage(name: str) -> None:
    if _STAGE_HOOK is not None:
        _STAGE_HOOK(name)


def _tag_pid(name: str) -> int | None:
    try:
        return int(name.rsplit("-", 2)[-2])
    except (ValueError, IndexError):
        return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def recover_checkpoint(directory) -> list[str]:
    """Finish or undo what a killed save of ``directory`` left behind; return what was done.

    Killed between its two renames, a save leaves no ``NAME`` but ``.NAME.old-TAG`` (the previous checkpoint)
    and a complete ``.NAME.part-TAG``: the part becomes ``NAME``. Otherwise left-over ``.part-``/``.old-``
    folders of saves whose process is gone, and temporary ``.*.part`` files inside ``NAME``, are removed.
    Errors (a read-only folder, say) are ignored: recovery never stops a load.
    """
    import shutil

    directory = Path(directory)
    parent, name = directory.parent, directory.name
    done: list[str] = []
    try:
        olds = sorted(parent.glob(f".{glob_escape(name)}.old-*"))
        parts = sorted(parent.glob(f".{glob_escape(name)}.part-*"))
    except OSError:
        return done
    try:
        if not directory.exists():
            for old in olds:
                part = parent / f".{name}.part-{old.name.rsplit('.old-', 1)[1]}"
                source = part if part.is_dir() else old  # the part is complete once the old folder exists
                if (source / "config.json").is_file():
                    os.rename(source, directory)
                    done.append(f"restored {directory.name} from {source.name}")
                    break
        for leftover in [*olds, *parts]:
            if leftover.exists() and not _alive(_tag_pid(leftover.name)):
                shutil.rmtree(leftover, ignore_errors=True)
                done.append(f"removed {leftover.name}")
        if directory.is_dir():
            for tmp in directory.glob(".*.part"):
                if not _alive(_tmp_owner(tmp)):
                    tmp.unlink()
                    done.append(f"removed {tmp.name}")
    except OSError:
        pass
    return done


def glob_escape(name: str) -> str:
    import glob

    return glob.escape(name)


def _tmp_owner(path: Path) -> int | None:
    from attnviz.io.atomic import part_owner  # write_atomic's temporary names carry the writer's pid

    return part_owner(path)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _carry_over(old: Path, new: Path, written: set[str]) -> None:
    """Hard-link (or copy) files of the old folder that this save does not write, e.g. the user's notes."""
    import shutil

    if not old.is_dir():
        return
    for entry in old.iterdir():
        if entry.name in written or entry.name.endswith(".part") or entry.name.startswith(".attnviz-"):
            continue
        target = new / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True)
            continue
        try:
            os.link(entry, target, follow_symlinks=False)
        except OSError:
            shutil.copy2(entry, target, follow_symlinks=False)


def _modes(directory: Path) -> tuple[int, int]:
    """(folder mode, file mode) of a save: the existing folder's, else the umask's; files never wider than it."""
    from attnviz.io.atomic import UMASK as umask

    try:
        dir_mode = os.stat(directory).st_mode & 0o7777
    except OSError:
        dir_mode = 0o777 & ~umask
    return dir_mode, 0o666 & ~umask & (dir_mode | 0o600)


def save_checkpoint(directory, model, config: ModelConfig, info: dict, tokenizer=None, tgt_tokenizer=None,
                    extra_files: dict | None = None) -> Path:
    """Write a model directory as one unit: a fresh sibling folder swapped in (see the module notes).

    Parameters
    ----------
    directory : path
        The model directory; created if missing, replaced as a whole if present.
    extra_files : dict, optional
        File name → ``write(path)`` for more files of the same unit (``snapshots.npz``).

    Raises
    ------
    ModelLoadError
        The folder cannot be written (permission, disk full): one line; the previous checkpoint is kept.
    """
    import secrets
    import shutil

    from safetensors import SafetensorError
    from safetensors.torch import save_file

    directory = Path(directory).expanduser()
    if directory.is_symlink():
        directory = directory.resolve()  # swap the folder the link points to; the link stays
    parent = directory.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelLoadError(f"cannot create model directory {directory}: {exc.strerror or exc}") from None
    recover_checkpoint(directory)
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    info = dict(info)
    if "format" in info:  # a task's description of its inputs must not replace the file's format version
        info["input_format"] = info.pop("format")
    doc = {"format": FORMAT, "model": config.to_dict(), **info}
    if tokenizer is not None:
        doc["tokenizer"] = tokenizer.to_dict()
    if tgt_tokenizer is not None:
        doc["tgt_tokenizer"] = tgt_tokenizer.to_dict()
    tag = f"{os.getpid()}-{secrets.token_hex(4)}"
    part, old = parent / f".{directory.name}.part-{tag}", parent / f".{directory.name}.old-{tag}"
    dir_mode, file_mode = _modes(directory)
    try:
        part.mkdir()
        os.chmod(part, dir_mode)  # the swapped-in folder keeps the old one's mode (a private 0700 stays private)
        _stage("part-created")
        save_file(state, str(part / "model.safetensors"), metadata={"format": "pt"})
        _fsync_file(part / "model.safetensors")
        _stage("weights-written")
        with open(part / "config.json", "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        _stage("config-written")
        for fname, write in (extra_files or {}).items():
            write(str(part / fname))
            _fsync_file(part / fname)
        for fname in ("model.safetensors", "config.json", *(extra_files or {})):
            if (part / fname).is_file():
                os.chmod(part / fname, file_mode)  # one mode for every file of the unit
        _carry_over(directory, part, {"model.safetensors", "config.json", *(extra_files or {})})
        _fsync_dir(part)
        _stage("part-complete")
        if directory.exists():
            os.rename(directory, old)
            _stage("old-moved")
        os.rename(part, directory)
        _fsync_dir(parent)
        _stage("swapped")
    except (OSError, SafetensorError) as exc:
        if part.exists():
            shutil.rmtree(part, ignore_errors=True)
        if old.exists() and not directory.exists():
            os.rename(old, directory)  # the swap itself failed: put the previous checkpoint back
        from attnviz.io.atomic import friendly_os_error

        text = (str(exc).splitlines() or [type(exc).__name__])[0]
        reason = (friendly_os_error(exc) if isinstance(exc, OSError) else
                  "no space left on the device" if "os error 28" in text else text)  # safetensors' own ENOSPC
        raise ModelLoadError(f"cannot write checkpoint to {directory}: {reason}") from None
    shutil.rmtree(old, ignore_errors=True)
    return directory


def load_checkpoint(name_or_dir, device=None, allow_pickle: bool = False, task_kind=None) -> LoadedModel:
    """Load an attnviz model directory (or a bundled model by name) onto ``device`` in eval mode.

    Only attnviz's own folders: other kinds of model enter through :mod:`attnviz.runtime`'s adapters.
    ``task_kind`` (task name → the model kind it trains) lets validation refuse a task/model mismatch.
    """
    return _load_native(resolve_model_path(name_or_dir), device, allow_pickle, task_kind)


def _load_native(path: Path, device, allow_pickle: bool, task_kind=None) -> LoadedModel:
    """An attnviz model folder: validated completely (see :mod:`attnviz.models.validate`), then built."""
    import torch

    from attnviz.device import pick_device
    from attnviz.models.registry import build_model
    from attnviz.models.validate import validate_model_folder
    from attnviz.text.tokenizer import Tokenizer

    recover_checkpoint(path)
    doc, config, header = validate_model_folder(path, task_kind=task_kind)
    weights = path / "model.safetensors"
    # the tokenizers before the model: a broken BPE serialisation fails before memory is spent
    tok = Tokenizer.from_dict(doc["tokenizer"]) if "tokenizer" in doc else None
    tgt = Tokenizer.from_dict(doc["tgt_tokenizer"]) if "tgt_tokenizer" in doc else None
    device = pick_device(device) if not isinstance(device, torch.device) else device
    if header is not None:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(str(weights))
        except (SafetensorError, OSError) as exc:
            raise ModelLoadError(f"cannot read {weights}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    else:
        pickle = next((path / n for n in _PICKLES if (path / n).is_file()), None)
        if pickle is None:
            raise ModelLoadError(f"{path} has no model.safetensors")
        if not allow_pickle:
            raise ModelLoadError(
                f"{pickle.name} is a pickle, which can run code when loaded; attnviz refuses it. "
                "Convert it to safetensors, or allow the restricted loader (weights_only) explicitly."
            )
        try:
            state = torch.load(pickle, map_location="cpu", weights_only=True)
        except Exception as exc:  # the restricted unpickler raises many types
            raise ModelLoadError(f"cannot read {pickle}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise ModelLoadError(f"{pickle.name} does not hold a dictionary of tensors")
    model = build_model(config)
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # shapes of a pickle (a safetensors file was checked from its header)
        raise ModelLoadError(f"weights in {path} do not match its config.json: "
                             f"{str(exc).splitlines()[-1].strip()}") from None
    if missing or unexpected:
        raise ModelLoadError(
            f"weights in {path} do not match its config.json "
            f"(missing {len(missing)}: {', '.join(missing[:3])}; unexpected {len(unexpected)})"
        )
    model.to(device).eval()
    info = {k: v for k, v in doc.items() if k not in ("model", "tokenizer", "tgt_tokenizer")}
    info.setdefault("name", path.name)
    return LoadedModel(model=model, config=config, info=info, tokenizer=tok, tgt_tokenizer=tgt,
                       path=path, device=device)
