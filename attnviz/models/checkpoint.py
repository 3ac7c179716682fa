"""Model directories: ``config.json`` + ``model.safetensors``, written atomically, never unpickled.

``config.json`` holds ``format``, ``model`` (the ModelConfig), ``tokenizer`` (and ``tgt_tokenizer``),
``task``, ``labels``, ``history``, ``metrics`` and anything else the trainer records.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.errors import ModelLoadError
from attnviz.io import assets_dir, bundled_models, write_atomic
from attnviz.models.config import ModelConfig

__all__ = ["LoadedModel", "save_checkpoint", "load_checkpoint", "resolve_model_path",
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


def resolve_model_path(name_or_dir: str | os.PathLike) -> Path:
    """A directory as given, or the bundled model of that name; clear error otherwise."""
    p = Path(name_or_dir).expanduser()
    if p.is_dir():
        return p
    bundled = assets_dir() / "models" / str(name_or_dir)
    if bundled.is_dir():
        return bundled
    names = ", ".join(bundled_models()) or "none installed"
    raise ModelLoadError(f"unknown model {str(name_or_dir)!r}: not a directory and not a bundled model ({names})")


def save_checkpoint(directory, model, config: ModelConfig, info: dict, tokenizer=None, tgt_tokenizer=None) -> Path:
    """Write weights then config, each to a temporary name renamed into place."""
    from safetensors.torch import save_file

    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelLoadError(f"cannot create model directory {directory}: {exc.strerror or exc}") from None
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    doc = {"format": FORMAT, "model": config.to_dict(), **info}
    if tokenizer is not None:
        doc["tokenizer"] = tokenizer.to_dict()
    if tgt_tokenizer is not None:
        doc["tgt_tokenizer"] = tgt_tokenizer.to_dict()
    try:
        write_atomic(directory / "model.safetensors", lambda tmp: save_file(state, tmp, metadata={"format": "pt"}))

        def write_json(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
                fh.flush()
                os.fsync(fh.fileno())

        write_atomic(directory / "config.json", write_json)
    except OSError as exc:
        raise ModelLoadError(f"cannot write checkpoint to {directory}: {exc.strerror or exc}") from None
    return directory


def load_checkpoint(name_or_dir, device=None, allow_pickle: bool = False) -> LoadedModel:
    """Load a model directory (or a bundled model by name) onto ``device`` in eval mode."""
    import torch

    from attnviz.device import pick_device
    from attnviz.models.registry import build_model
    from attnviz.text.tokenizer import Tokenizer

    path = resolve_model_path(name_or_dir)
    cfg_file, weights = path / "config.json", path / "model.safetensors"
    if not cfg_file.is_file():
        raise ModelLoadError(f"{path} has no config.json: not a model directory")
    try:
        doc = json.loads(cfg_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"cannot read {cfg_file}: {exc}") from None
    if "model" not in doc:
        raise ModelLoadError(f"{cfg_file} is not an attnviz model config (no 'model' section)")
    config = ModelConfig.from_dict(doc["model"])
    device = pick_device(device) if not isinstance(device, torch.device) else device
    model = build_model(config)
    if weights.is_file():
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(str(weights))
        except (SafetensorError, OSError) as exc:
            raise ModelLoadError(f"cannot read {weights}: {exc}") from None
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
            raise ModelLoadError(f"cannot read {pickle}: {exc}") from None
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ModelLoadError(
            f"weights in {path} do not match its config.json "
            f"(missing {len(missing)}: {', '.join(missing[:3])}; unexpected {len(unexpected)})"
        )
    model.to(device).eval()
    tok = Tokenizer.from_dict(doc["tokenizer"]) if "tokenizer" in doc else None
    tgt = Tokenizer.from_dict(doc["tgt_tokenizer"]) if "tgt_tokenizer" in doc else None
    info = {k: v for k, v in doc.items() if k not in ("model", "tokenizer", "tgt_tokenizer")}
    info.setdefault("name", path.name)
    return LoadedModel(model=model, config=config, info=info, tokenizer=tok, tgt_tokenizer=tgt,
                       path=path, device=device)
