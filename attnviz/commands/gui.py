"""``attnviz gui`` (the default): open the desktop app."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("gui", help="open the desktop app (default)")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="model folders, images or traces saved by `attnviz trace` to open (what the desktop "
                        "entry passes)")
    p.add_argument("--model", help="model to select at start (bundled name or directory)")
    p.add_argument("--text", help="sentence to show first")
    p.add_argument("--image", help="image to show first")
    p.add_argument("--presentation", action="store_true", help="large fonts and thick lines for a lecture hall")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.gui.open_paths import plan_for_args

    from attnviz.cli import check_display

    args.plan = plan_for_args(args)  # a path that is not there or not openable: one line, exit 2
    check_display()  # before Qt: without a display it aborts with exit code 134
    from attnviz.gui.app import run_app

    return run_app(args)
