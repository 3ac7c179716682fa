"""Arguments several subcommands share: --model, --text/--image, --device, writable outputs."""

from __future__ import annotations

import os
from pathlib import Path

from attnviz.errors import AttnvizError

__all__ = ["add_model_args", "add_input_args", "check_writable", "load_from_args"]


def add_model_args(p) -> None:
    p.add_argument("--model", required=True, help="bundled model name or model directory")
    p.add_argument("--device", default="auto", help="auto (default), cpu, cuda or mps")
    p.add_argument("--allow-pickle", action="store_true",
                   help="read .bin/.pt weights with torch.load(weights_only=True) (refused otherwise)")


def add_input_args(p, required: bool = True) -> None:
    g = p.add_mutually_exclusive_group(required=required)
    g.add_argument("--text", help="input sentence (text models)")
    g.add_argument("--image", help="input image file (vision models)")


def check_writable(path: str) -> Path:
    """Fail early, with one line, when an output file cannot be written."""
    out = Path(path)
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise AttnvizError(f"{out} is a directory, not a file name")
    if not parent.is_dir():
        raise AttnvizError(f"cannot write {out}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise AttnvizError(f"cannot write {out}: directory {parent} is not writable")
    return out


def load_from_args(args):
    from attnviz.commands.progress import status
    from attnviz.pipeline import load_model

    with status(f"loading {args.model}"):
        return load_model(args.model, device=args.device, allow_pickle=getattr(args, "allow_pickle", False))
