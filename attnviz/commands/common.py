"""What several subcommands share: --model, --text/--image, --device, checked numbers, safe outputs.

Numbers are checked where argparse reads them (``type=`` functions below), so a bad value is one line
(``attnviz: error: argument --dpi: 0 is outside 10..2400``) and exit code 2 before anything is loaded.
Outputs are checked before the model loads: writable, and never one of the command's inputs.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from contextlib import contextmanager
from pathlib import Path

from attnviz.errors import AttnvizError

__all__ = ["add_dtype_arg", "add_model_args", "add_input_args", "check_writable", "check_output", "load_from_args",
           "int_range", "float_range", "index", "positive_int", "dpi", "size", "seed", "write_guard",
           "model_folder", "examples", "HELP_FORMATTER", "MAX_INDEX", "fill_example_input", "check_pack_output",
           "add_force_arg", "guarded_outputs", "read_text_arg"]

MAX_INDEX = 1_000_000  # a layer, head or position beyond this is a typo on any model attnviz can load


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the description to the terminal; keeps the example lines of the epilog as written."""

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


HELP_FORMATTER = HelpFormatter


def examples(*lines: str) -> str:
    """An ``epilog`` of example command lines for ``--help``."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


# -- numbers -----------------------------------------------------------------------------------------------
def int_range(low: int, high: int | None = None):
    """An argparse ``type`` accepting whole numbers in ``low..high`` (``high`` None: no upper bound)."""

    def parse(text: str) -> int:
        try:
            value = int(str(text).strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            top = f"{high:,}" if high is not None else "∞"
            raise argparse.ArgumentTypeError(f"{value:,} is outside {low}..{top}")
        return value

    parse.__name__ = "whole number"
    return parse


def float_range(low: float, high: float, low_open: bool = False):
    """An argparse ``type`` accepting finite numbers in ``[low, high]`` (``(low, high]`` if ``low_open``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not a finite number")
        if value < low or value > high or (low_open and value == low):
            bracket = "(" if low_open else "["
            raise argparse.ArgumentTypeError(f"{value:g} is outside {bracket}{low:g}, {high:g}]")
        return value

    parse.__name__ = "number"
    return parse


index = int_range(0, MAX_INDEX)  # layer, head, query: checked against the trace once it exists
positive_int = int_range(1)
seed = int_range(0, 2**32 - 1)  # numpy refuses negative seeds
dpi = int_range(10, 2400)


def size(text: str) -> tuple[int, int]:
    """``WxH`` in pixels, each side 16..16384 (the export renderer's range)."""
    m = re.fullmatch(r"\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not WxH (e.g. 1920x1080)")
    w, h = int(m[1]), int(m[2])
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise argparse.ArgumentTypeError(f"{w}x{h} is out of range: each side 16..16384 pixels")
    return w, h


size.__name__ = "size"


# -- model and input ---------------------------------------------------------------------------------------
def add_model_args(p) -> None:
    p.add_argument("--model", required=True, metavar="NAME|DIR",
                   help="a bundled model's name (e.g. coref, shapes) or a model directory")
    p.add_argument("--device", default="auto", metavar="DEVICE",
                   help="where the model runs: auto (default: a GPU if there is one), cpu, cuda[:N] or mps")
    p.add_argument("--allow-pickle", action="store_true",
                   help="read .bin/.pt weights with torch.load(weights_only=True) (refused otherwise)")
    add_dtype_arg(p)


def add_dtype_arg(p) -> None:
    """``--dtype``: one spelling for every command that loads a model (``trace``, ``export``, ``gui``...)."""
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "float16", "bfloat16"),
                   help="precision the model runs in: auto (default: the checkpoint's own, float16/bfloat16 or "
                        "float32), or float32/float16/bfloat16 (Hugging Face folders; attnviz's own models are float32)")


def _image_arg(value: str) -> str:
    """--image: ``sample:NAME`` (the spelling scenes use) becomes the bundled sample's path."""
    import argparse

    from attnviz.errors import InputError
    from attnviz.vision.samples import resolve_image

    try:
        return resolve_image(value)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_input_args(p, required: bool = False) -> None:
    """--text / --image; neither given: the model's own example (see :func:`fill_example_input`)."""
    g = p.add_mutually_exclusive_group(required=required)
    g.add_argument("--text", metavar="TEXT",
                   help="input sentence (text models; default: the model's example sentence, as the app opens on)")
    g.add_argument("--text-file", metavar="PATH",
                   help="read the input text from a UTF-8 file (a long document; a byte-order mark is accepted)")
    g.add_argument("--image", metavar="FILE", type=_image_arg,
                   help="input image file: PNG, JPEG, … or sample:NAME, a bundled sample as scenes name it "
                        "(sample:shapes-star-offcentre) (vision models; default: the model's example image)")
    p.add_argument("--target", metavar="TEXT",
                   help="encoder–decoders (translate, T5, BART, Marian, …): the output the decoder reads "
                        "(default: the model's own greedy output)")


def fill_example_input(args) -> None:
    """Neither ``--text`` nor ``--image`` given: the input the app opens ``--model`` on, its task's example.

    Sets ``args.text`` or ``args.image`` and says which on standard error (a figure should never show an
    input the lecturer did not know about). A Hugging Face text model runs on the sentence the app opens it
    on; any other model without a built-in task asks for the input in one line. A missing folder or a
    broken ``config.json`` is named first.
    """
    import sys

    read_text_arg(args)
    if getattr(args, "text", None) is not None or getattr(args, "image", None) is not None:
        return
    ref = getattr(args, "model", None)
    if not ref:
        return  # the command's own check names what is missing
    from attnviz.models.checkpoint import resolve_model_path
    from attnviz.models.validate import read_json_bounded

    # a missing folder or a broken config.json is the problem to name, not the missing --text
    folder = resolve_model_path(ref)
    if not (folder / "config.json").is_file():
        raise AttnvizError(f"{folder} has no config.json: not a model directory")
    doc = read_json_bounded(folder / "config.json")
    task_name = doc.get("task") if isinstance(doc, dict) else None
    from attnviz.tasks import TASKS, get_task

    if task_name not in TASKS:
        from attnviz.hf.detect import detect_hf_folder

        hf = detect_hf_folder(folder)
        if hf is None or (hf.family is not None and hf.family.kind == "vit") or hf.has_processor:
            raise AttnvizError(f"give --text TEXT or --image FILE: {ref} has no example input of its own")
        from attnviz.text.fallback_text import FALLBACK_TEXT

        args.text = FALLBACK_TEXT  # what the app opens such a folder on
        print(f"attnviz: note: no --text given: {ref} runs on the sentence {args.text!r}", file=sys.stderr)
        return
    task = get_task(task_name)
    example = task.example_input()
    if task.kind == "vit":
        if not isinstance(example, (str, os.PathLike)):
            raise AttnvizError(f"give --image FILE: the example image of {ref} is not installed")
        args.image = str(example)
        said = f"its example image {Path(example).name}"
    else:
        args.text = str(example)
        said = f"its example sentence {args.text!r}"
    print(f"attnviz: note: no --text or --image given: {ref} runs on {said}", file=sys.stderr)


def read_text_arg(args) -> None:
    """``--text-file PATH`` given: set ``args.text`` to the file's text (one line and exit 2 if it is not one)."""
    path = getattr(args, "text_file", None)
    if path is None or getattr(args, "text", None) is not None:
        return
    from attnviz.text.text_file import read_text_file

    args.text = read_text_file(path)


def model_folder(name_or_dir: str) -> Path | None:
    """The folder ``--model`` names (a directory, or a bundled model), without loading anything."""
    from attnviz.io import assets_dir

    p = Path(name_or_dir).expanduser()
    if p.is_dir():
        return p
    bundled = assets_dir() / "models" / str(name_or_dir)
    return bundled if bundled.is_dir() else None


# -- outputs -----------------------------------------------------------------------------------------------
def check_writable(path: str) -> Path:
    """Fail early, with one line, when an output file cannot be written."""
    out = Path(path).expanduser()
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise AttnvizError(f"{out} is a directory, not a file name")
    if not parent.is_dir():
        raise AttnvizError(f"cannot write {out}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise AttnvizError(f"cannot write {out}: directory {parent} is not writable")
    return out


def _named(args) -> tuple[list, list]:
    """(files, model references) the command's ``--scene`` or ``--lesson`` names (read once, cached)."""
    cached = getattr(args, "_named_inputs", None)
    if cached is not None:
        return cached
    from attnviz.lessons.named_inputs import named_inputs

    scenes = []
    if getattr(args, "scene", None):
        from attnviz.lessons.scene import load_scene

        scenes = [load_scene(args.scene)]
    elif getattr(args, "lesson", None):
        from attnviz.lessons.lesson import load_lesson

        scenes = load_lesson(args.lesson).scenes
    named = named_inputs(scenes)
    try:
        args._named_inputs = named
    except AttributeError:
        pass
    return named


def _inputs(args) -> list:
    given = [getattr(args, name, None) for name in ("image", "scene", "lesson", "corpus", "text_file")]
    return given + _named(args)[0]


def _folders(args) -> list:
    refs = [getattr(args, "model", None), *_named(args)[1]]
    return [model_folder(m) for m in refs if m] + [getattr(args, "images", None)]


def check_output(path: str, args) -> Path:
    """:func:`check_writable`, and the rules of :mod:`attnviz.io.outputs`: never an input of ``args``
    (``--image``, ``--model``'s folder), never into any model folder, never over a file attnviz did not write
    unless ``--force``."""
    from attnviz.io.outputs import check_target

    out = check_writable(path)
    check_target(out, inputs=_inputs(args), folders=_folders(args), force=getattr(args, "force", False))
    return out


def check_pack_output(folder: str, args) -> Path:
    """A lecture pack's folder: new, empty, or an earlier pack's (:func:`attnviz.io.outputs.check_pack_folder`)."""
    from attnviz.io.outputs import check_pack_folder

    check_pack_folder(folder, inputs=_inputs(args), folders=_folders(args), force=getattr(args, "force", False))
    return Path(folder)


def add_force_arg(p) -> None:
    p.add_argument("--force", action="store_true",
                   help="replace an existing file attnviz did not write, or write into a model folder "
                        "(never over one of the command's own inputs)")


@contextmanager
def guarded_outputs(args):
    """Every file written inside the block obeys the same rules as :func:`check_output` (derived names too)."""
    from attnviz.io.outputs import output_policy

    inputs = [p for p in _inputs(args) if p and os.path.isfile(str(p))]
    with output_policy(force=getattr(args, "force", False), inputs=inputs, folders=_folders(args)):
        yield


@contextmanager
def write_guard(path):
    """Turn a failed write (disk full, permission, read-only file system) into one line for the user."""
    try:
        yield
    except OSError as exc:
        from attnviz.io.atomic import friendly_os_error

        raise AttnvizError(f"cannot write {path}: {friendly_os_error(exc)}") from None


def load_from_args(args):
    from attnviz.commands.progress import status
    from attnviz.runtime import load_model

    with status(f"loading {args.model}"):
        return load_model(args.model, device=args.device, allow_pickle=getattr(args, "allow_pickle", False),
                          dtype=getattr(args, "dtype", "auto"))
