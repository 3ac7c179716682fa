"""Is this folder a Hugging Face model, and of which family? (cheap: reads config.json only)

An attnviz checkpoint's ``config.json`` has a ``model`` section; a Hugging Face one has ``model_type``
and usually ``architectures``. Nothing here imports transformers or torch, so
:func:`attnviz.models.checkpoint.load_checkpoint` can ask on every load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from attnviz.hf.families import Family, family_of

__all__ = ["HFFolder", "detect_hf_folder", "is_hf_folder", "SAFETENSORS", "PICKLES"]

SAFETENSORS = ("model.safetensors", "model.safetensors.index.json")
PICKLES = ("pytorch_model.bin", "pytorch_model.bin.index.json")
_OTHER_WEIGHTS = ("tf_model.h5", "flax_model.msgpack", "model.ckpt.index")


@dataclass
class HFFolder:
    """What a Hugging Face model folder holds, as far as its file names and config.json tell."""

    path: Path
    doc: dict
    model_type: str
    architecture: str  # "" when config.json names none (a base model is then loaded)
    family: Family | None  # None: no per-family facts (the generic capture alone)
    safetensors: Path | None = None
    pickle: Path | None = None
    other_weights: list[str] = field(default_factory=list)

    @property
    def family_name(self) -> str:
        return self.family.name if self.family is not None else self.model_type

    @property
    def has_processor(self) -> bool:
        return (self.path / "preprocessor_config.json").is_file()


def _read_config(path: Path) -> dict | None:
    from attnviz.errors import ModelLoadError
    from attnviz.models.validate import read_json_bounded  # bounded size and nesting

    try:
        doc = read_json_bounded(path / "config.json")
    except ModelLoadError:
        return None
    return doc if isinstance(doc, dict) else None


def detect_hf_folder(path) -> HFFolder | None:
    """Describe ``path`` if it is a Hugging Face model folder, else None (also for unreadable configs,
    which the attnviz loader then reports)."""
    path = Path(path).expanduser()
    if not path.is_dir():
        return None
    doc = _read_config(path)
    if doc is None or "model" in doc or not (doc.get("model_type") or doc.get("architectures")):
        return None
    archs = doc.get("architectures") or []
    arch = str(archs[0]) if isinstance(archs, list) and archs else ""
    model_type = str(doc.get("model_type") or "")
    return HFFolder(
        path=path, doc=doc, model_type=model_type, architecture=arch, family=family_of(model_type),
        safetensors=next((path / n for n in SAFETENSORS if (path / n).is_file()), None),
        pickle=next((path / n for n in PICKLES if (path / n).is_file()), None),
        other_weights=[n for n in _OTHER_WEIGHTS if (path / n).is_file()],
    )


def is_hf_folder(path) -> bool:
    """True when ``path`` holds a Hugging Face ``config.json`` (not an attnviz checkpoint)."""
    return detect_hf_folder(path) is not None
