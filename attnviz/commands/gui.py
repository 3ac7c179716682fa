"""``attnviz gui`` (the default): open the desktop app."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("gui", help="open the desktop app (default)")
    p.add_argument("--model", help="model to select at start (bundled name or directory)")
    p.add_argument("--text", help="sentence to show first")
    p.add_argument("--image", help="image to show first")
    p.add_argument("--presentation", action="store_true", help="large fonts and thick lines for a lecture hall")
    p.add_argument("--scene", help="open a saved scene (also: attnviz FILE.json)")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.gui.app import run_app

    return run_app(args)
