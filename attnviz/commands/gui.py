"""``attnviz gui`` (the default): open the desktop app."""

from __future__ import annotations


def add_parser(sub) -> None:
    from attnviz.commands.common import HELP_FORMATTER, examples

    p = sub.add_parser(
        "gui", help="open the desktop app (default)",
        description="Open the desktop app: attention views (head map, model overview, token lines, rollout, "
                    "embeddings), the Q/K/V walkthrough and training, on the bundled models or a model directory. "
                    "`attnviz` with no command does the same.",
        epilog=examples("attnviz", "attnviz gui --model translate --text \"the big dog sees a small cat\"",
                        "attnviz gui --model shapes --image photo.png --presentation"),
        formatter_class=HELP_FORMATTER)
    p.add_argument("--model", metavar="NAME|DIR", help="model to select at start (bundled name or directory)")
    p.add_argument("--text", metavar="TEXT", help="sentence to show first")
    p.add_argument("--image", metavar="FILE", help="image to show first")
    p.add_argument("--presentation", action="store_true", help="large fonts and thick lines for a lecture hall")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.gui.app import run_app

    return run_app(args)
