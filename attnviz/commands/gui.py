"""``attnviz gui`` (the default): open the desktop app."""

from __future__ import annotations

import os
import sys


def add_parser(sub) -> None:
    from attnviz.commands.common import HELP_FORMATTER, add_dtype_arg, examples

    p = sub.add_parser(
        "gui", help="open the desktop app (default)",
        description="Open the desktop app: attention views (head map, model overview, token lines, rollout, "
                    "embeddings), the Q/K/V walkthrough and training, on the bundled models or a model directory. "
                    "`attnviz` with no command does the same.",
        epilog=examples("attnviz", "attnviz path/to/model-folder photo.png",
                        "attnviz gui --model translate --text \"the big dog sees a small cat\"",
                        "attnviz gui --model shapes --image photo.png --presentation",
                        "attnviz gui path/to/fp16-model --dtype float32"),
        formatter_class=HELP_FORMATTER)
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="model folders, images or traces saved by `attnviz trace` to open (what the desktop "
                        "entry passes)")
    p.add_argument("--model", metavar="NAME|DIR", help="model to select at start (bundled name or directory)")
    p.add_argument("--text", metavar="TEXT", help="sentence to show first")
    p.add_argument("--image", metavar="FILE", help="image to show first")
    p.add_argument("--presentation", action="store_true", help="large fonts and thick lines for a lecture hall")
    p.add_argument("--scene", metavar="FILE", help="open a saved scene (also: attnviz FILE.json)")
    add_dtype_arg(p)  # every model the app opens this session runs in it
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.gui.open_paths import plan_for_args

    scene, args.paths = split_scene_paths(getattr(args, "paths", None) or [])
    args.scene = args.scene or scene
    args.plan = plan_for_args(args)  # a path that is not there or not openable: one line, exit 2
    check_display()  # before Qt: without a display it aborts with exit code 134
    from attnviz.gui.app import run_app

    return run_app(args)


def split_scene_paths(paths: list[str]) -> tuple[str | None, list[str]]:
    """A saved scene among the paths (``attnviz FILE.json``) opens as a scene; the rest as models, images,
    traces. Returns (the first scene or None, the other paths)."""
    from attnviz.lessons.scene import is_scene_file

    scenes = [p for p in paths if str(p).lower().endswith(".json") and is_scene_file(p)]
    return (scenes[0] if scenes else None), [p for p in paths if p not in scenes]


def check_display() -> None:
    """On Linux and other X11/Wayland systems: fail with one line when there is no display to open.

    Qt would otherwise abort with a multi-line message and exit code 134. ``QT_QPA_PLATFORM`` (e.g.
    ``offscreen``) counts as a display: the user chose where the window goes.
    """
    from attnviz.errors import AttnvizError

    if sys.platform in ("win32", "darwin"):
        return
    if any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        return
    raise AttnvizError("no display to open the app on (DISPLAY and WAYLAND_DISPLAY are unset); "
                       "the commands work without one: attnviz --help")
