"""Tiny model folders for the robustness tests (validation, fuzz, kill, safe outputs): built in milliseconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from attnviz.models.checkpoint import save_checkpoint
from attnviz.models.config import ModelConfig
from attnviz.models.registry import build_model
from attnviz.text.tokenizer import Tokenizer

SENTENCE = "the animal did not cross the street because it was tired"


def save_text_model(path, seed: int = 0, info: dict | None = None, **cfg_overrides) -> Path:
    torch.manual_seed(seed)
    tok = Tokenizer.build("word", [SENTENCE, "the cat sat on the mat"], prefix=["[CLS]"])
    cfg = ModelConfig(**{"kind": "encoder", "vocab_size": len(tok.vocab), "n_layers": 2, "n_heads": 2,
                         "d_model": 16, "max_len": 16, "mlp_ratio": 2.0, **cfg_overrides})
    return save_checkpoint(path, build_model(cfg), cfg, {"task": None, "labels": ["a", "b"], **(info or {})},
                           tokenizer=tok)


def save_vit_model(path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    cfg = ModelConfig(kind="vit", n_layers=1, n_heads=2, d_model=16, image_size=8, patch_size=2, in_chans=3,
                      n_classes=3, mlp_ratio=2.0)
    return save_checkpoint(path, build_model(cfg), cfg, {"task": None, "labels": ["a", "b", "c"]})


def write_image(path, size=(12, 12)) -> Path:
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (*size, 3), dtype=np.uint8)).save(path)
    return Path(path)


def edited_copy(src: Path, dst: Path, edit) -> Path:
    """A copy of model folder ``src`` whose config.json ``edit(doc)`` changed (in place or by returning one)."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    doc = json.loads((dst / "config.json").read_text())
    new = edit(doc)
    text = new if isinstance(new, str) else json.dumps(doc if new is None else new)
    (dst / "config.json").write_text(text)
    return dst


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    from attnviz.cli import main

    try:
        code = main([*map(str, argv)])
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
