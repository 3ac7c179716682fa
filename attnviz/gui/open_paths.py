"""``attnviz PATH…``: open model folders, images and saved traces in the app.

Two halves, so that a bad path fails before any window exists (one line, exit code 2):

- :func:`plan_paths` (before Qt starts) classifies every path with
  :func:`attnviz.io.path_kinds.classify_path` and turns them into the window's start-up choices:
  the model to load first, the image or text to show first, and what to open once it is up;
- :func:`open_paths` (once the window exists) opens the rest: a saved trace is shown with its own
  numbers after the first run, other kinds go to the opener registered for them.

New kinds (e.g. lesson scenes): ``attnviz.io.path_kinds.register_path_kind("scene", test)`` and
``register_opener("scene", lambda window, path: ...)`` here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.errors import AttnvizError

__all__ = ["PathPlan", "plan_paths", "plan_for_args", "open_paths", "register_opener", "OPENERS", "VISION_FALLBACK"]

log = logging.getLogger(__name__)

VISION_FALLBACK = "shapes"  # the bundled vision model an image opens with when no vision model is chosen


@dataclass
class PathPlan:
    """What the window starts with, and what it opens once it is up."""

    model: str | None = None
    image: str | None = None
    text: str | None = None
    later: list[tuple[str, str]] = field(default_factory=list)  # (kind, path) for open_paths
    extra_models: list[str] = field(default_factory=list)  # more model folders: go to File ▸ Recent
    extra_images: list[str] = field(default_factory=list)


def _model_kind(ref: str) -> str | None:
    """The ``model.kind`` in a model's config.json (bundled name or folder), or None."""
    from attnviz.io import assets_dir

    folder = Path(ref).expanduser()
    if not folder.is_dir():
        folder = assets_dir() / "models" / ref
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    try:  # bounded: a shared folder's config nested 100000 deep is "no kind", not a crash
        return read_json_file(folder / "config.json", 64 * 2**20, what="config file").get("model", {}).get("kind")
    except (JsonLimitError, AttributeError):
        return None


def _trace_header(path: str):
    """The description of a saved trace (:class:`TraceDescription`; reads only its ``meta`` array)."""
    import numpy as np

    try:
        from attnviz.io.jsonfile import parse_json_text

        with np.load(path, allow_pickle=False) as data:
            meta = parse_json_text(str(data["meta"]), f"the meta of {path}", error=AttnvizError)
        if not isinstance(meta, dict):
            raise AttnvizError(f"cannot read trace {path}: its meta is not a JSON object")
        from attnviz.capture.description import TraceDescription

        return TraceDescription.from_meta(meta, f"trace {path}", saved=True)
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        raise AttnvizError(f"cannot read trace {path}: {exc}") from None


def plan_paths(paths: list[str], model: str | None = None, last_model: str | None = None) -> PathPlan:
    """Classify ``paths`` and choose the start-up model and input.

    Parameters
    ----------
    paths : what was given on the command line (or by the desktop's ``%F``).
    model : ``--model`` when given: it wins over a model folder among the paths.
    last_model : the model the app would open otherwise (an image keeps it when it is a vision model).

    Raises
    ------
    AttnvizError
        one line naming the first path that does not exist or is of no known kind.
    """
    from attnviz.io import bundled_models
    from attnviz.io.path_kinds import UnknownPathError, classify_path

    plan = PathPlan(model=model)
    images, traces = [], []
    for raw in paths:
        try:
            kind = classify_path(raw)
        except UnknownPathError as exc:
            raise AttnvizError(str(exc)) from None
        path = str(Path(raw).expanduser().resolve())
        if kind == "model":
            folder = str(Path(path).parent) if Path(path).is_file() else path  # config.json given
            if plan.model is None:
                plan.model = folder
            else:
                plan.extra_models.append(folder)
        elif kind == "image":
            images.append(path)
        elif kind == "trace":
            traces.append(path)
        else:
            plan.later.append((kind, path))
    if traces:
        described = _trace_header(traces[0])
        name = described.model_name
        if plan.model is None and name in bundled_models():
            plan.model = name  # the model that made it: the input panel runs the same model
        if described.input_text:
            plan.text = described.input_text
        plan.later = [("trace", t) for t in traces] + plan.later
    if images:
        plan.image, plan.extra_images = images[0], images[1:]
        chosen = plan.model or last_model
        if not chosen or _model_kind(chosen) != "vit":
            names = bundled_models()
            vision = [n for n in names if _model_kind(n) == "vit"]
            plan.model = VISION_FALLBACK if VISION_FALLBACK in names else (vision[0] if vision else plan.model)
        elif plan.model is None:
            plan.model = chosen
    return plan


def _open_trace(win, path: str) -> None:
    """Show a saved trace's own numbers, after the window's first run (which it then replaces)."""
    from attnviz.capture.trace import Trace

    try:
        trace = Trace.load(path)
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return
    name = trace.description.model_name or "an unknown model"

    def show(_first=None) -> None:
        from attnviz.text.token_strip import StripData, build_strip

        win.trace_shown.disconnect(show)
        loaded = getattr(win.loaded, "name", None)
        same = loaded == trace.description.model_name
        title = "source tokens" if trace.src_tokens else "tokens"
        # the strip shows the trace's own tokens; their IDs need the model's tokenizer, which only the same
        # model's is (another model's IDs, or none, would be numbers the trace's model never read)
        strip = (build_strip(getattr(win.loaded, "tokenizer", None), trace.src_tokens or trace.tokens, title) if same
                 else StripData([], [], title=title))
        win.show_trace(trace, source=trace.description.input_text, strip=strip)
        if not same:
            win.notify(f"{Path(path).name}: saved by {name}; the views show its saved numbers. {name}'s tokenizer "
                       f"is not loaded: the input strip is empty, and the prediction panel names tokens by the trace's "
                       f"own labels or by their IDs; the input panel runs "
                       f"{loaded or 'no model'}", "warning")
        else:
            win.statusBar().showMessage(f"opened {path} (saved trace of {name})", 8000)

    win.trace_shown.connect(show)


OPENERS: dict[str, Callable] = {"trace": _open_trace}


def register_opener(kind: str, opener: Callable) -> None:
    """``opener(window, path)`` opens files of ``kind`` (a kind registered with ``register_path_kind``)."""
    OPENERS[kind] = opener


def open_paths(win, plan: PathPlan) -> None:
    """Open what :func:`plan_paths` left for the running window ``win`` (a MainWindow)."""
    for folder in reversed(plan.extra_models):
        win.settings.add_recent("models", folder)
    for image in reversed(plan.extra_images):
        win.settings.add_recent("images", image)
    for kind, path in plan.later:
        opener = OPENERS.get(kind)
        if opener is None:
            win.notify(f"{path}: attnviz cannot open {kind} files in this build", "warning")
            continue
        log.info("opening %s %s", kind, path)
        opener(win, path)


def plan_for_args(args) -> PathPlan | None:
    """For ``attnviz gui``: plan ``args.paths`` and fill ``args.model``/``image``/``text`` from it."""
    paths = getattr(args, "paths", None) or []
    if not paths:
        return None
    from attnviz.gui.settings import AppSettings

    plan = plan_paths(paths, getattr(args, "model", None), last_model=AppSettings().last_model or None)
    args.model = plan.model
    if plan.image and not getattr(args, "image", None):
        args.image = plan.image
    if plan.text and not getattr(args, "text", None):
        args.text = plan.text
    return plan
